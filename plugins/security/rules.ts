import { SEVERITIES, type SecurityEvent, type Severity } from '../../core/contracts/security';

/**
 * Detection rules, kept as data: a rule counts the events of some categories that share a
 * subject (`group_by`) within a sliding window; when the count reaches the threshold it
 * opens a finding (or adds evidence to the open one for that subject) and, when the rule
 * names one, takes a response. A change of a rule's logic bumps its version; findings keep
 * the version that raised them.
 */
export interface Rule {
  id: string;
  version: number;
  title: string;
  categories: string[];
  /** Events below this severity are not counted. */
  min_severity: Severity;
  group_by: 'actor' | 'address' | 'kernel_id' | 'tenant_id';
  threshold: number;
  window_seconds: number;
  severity: Severity;
  response: { action: 'lock_account'; lock_seconds: number } | { action: 'revoke_sessions' } | null;
}

export const RULES: Rule[] = [
  {
    id: 'auth-brute-force-account', version: 1, title: 'Brute force against an account',
    categories: ['auth.login_failed', 'auth.login_throttled'], min_severity: 'info', group_by: 'actor',
    threshold: 8, window_seconds: 900, severity: 'high', response: { action: 'lock_account', lock_seconds: 900 },
  },
  {
    id: 'auth-brute-force-address', version: 1, title: 'Password guessing from one address',
    categories: ['auth.login_failed', 'auth.login_throttled'], min_severity: 'info', group_by: 'address',
    threshold: 20, window_seconds: 900, severity: 'high', response: null,
  },
  {
    id: 'auth-token-reuse', version: 1, title: 'Refresh token reused (stolen session)',
    categories: ['auth.refresh_reuse'], min_severity: 'info', group_by: 'actor',
    threshold: 1, window_seconds: 3600, severity: 'high', response: { action: 'revoke_sessions' },
  },
  {
    id: 'auth-forged-tokens', version: 1, title: 'Repeated refused tokens from one address',
    categories: ['auth.token_refused'], min_severity: 'info', group_by: 'address',
    threshold: 10, window_seconds: 300, severity: 'medium', response: null,
  },
  {
    id: 'http-privilege-probing', version: 1, title: 'Repeated calls above the caller\'s role',
    categories: ['http.forbidden'], min_severity: 'info', group_by: 'actor',
    threshold: 5, window_seconds: 300, severity: 'medium', response: null,
  },
  {
    id: 'http-tenant-probing', version: 1, title: 'Repeated lookups of objects outside the tenant',
    categories: ['http.not_found_probe'], min_severity: 'info', group_by: 'actor',
    threshold: 1, window_seconds: 3600, severity: 'medium', response: null,
  },
  {
    id: 'limits-burst', version: 1, title: 'Sustained rate-limit refusals',
    categories: ['limits.rate_limited'], min_severity: 'info', group_by: 'tenant_id',
    threshold: 3, window_seconds: 3600, severity: 'low', response: null,
  },
  {
    id: 'mesh-kernel-failing', version: 1, title: 'A kernel node turned unhealthy repeatedly',
    categories: ['mesh.node_unhealthy'], min_severity: 'info', group_by: 'kernel_id',
    threshold: 3, window_seconds: 900, severity: 'high', response: null,
  },
  {
    id: 'cloudsec-permissive-rule', version: 1, title: 'Permissive firewall rule',
    categories: ['cloudsec.permissive_rule'], min_severity: 'medium', group_by: 'actor',
    threshold: 1, window_seconds: 86400, severity: 'medium', response: null,
  },
  {
    id: 'endpoint-intel-match', version: 1, title: 'Endpoint detection matches threat intelligence',
    categories: ['endpoint.intel_match'], min_severity: 'info', group_by: 'actor',
    threshold: 1, window_seconds: 86400, severity: 'high', response: null,
  },
  {
    id: 'endpoint-severe-detection', version: 1, title: 'High-severity endpoint detection',
    categories: ['endpoint.detection'], min_severity: 'high', group_by: 'actor',
    threshold: 1, window_seconds: 3600, severity: 'high', response: null,
  },
  {
    id: 'netsec-sip-attack', version: 1, title: 'SIP scanning, registration brute force or toll fraud',
    categories: ['netsec.sip_scan', 'netsec.sip_bruteforce', 'netsec.toll_fraud'], min_severity: 'info', group_by: 'address',
    threshold: 1, window_seconds: 3600, severity: 'high', response: null,
  },
  {
    // One finding per leaking route (the actor is `METHOD /path`), raised by the attack simulation.
    id: 'stability-isolation-leak', version: 1, title: 'Tenant isolation leak found by the attack simulation',
    categories: ['stability.isolation_leak'], min_severity: 'critical', group_by: 'actor',
    threshold: 1, window_seconds: 86400, severity: 'critical', response: null,
  },
];

export function severityRank(s: Severity): number {
  return SEVERITIES.indexOf(s);
}

/** The rules an event can count towards, with the subject it is grouped under. */
export function rulesFor(e: SecurityEvent): Array<{ rule: Rule; subject: string }> {
  const out: Array<{ rule: Rule; subject: string }> = [];
  for (const rule of RULES) {
    if (!rule.categories.includes(e.category) || severityRank(e.severity) < severityRank(rule.min_severity)) continue;
    const subject = e[rule.group_by];
    if (subject) out.push({ rule, subject });
  }
  return out;
}
