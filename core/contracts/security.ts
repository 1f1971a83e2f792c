import { createServiceRef } from '../plugin';

/**
 * The security service (plugin `security`): a small SIEM over this platform. Core publishes
 * `security.<kind>` bus events on refusals (failed logins, refused tokens, 403, 429) which the
 * plugin records itself; other plugins (the security-suite connectors) record events and
 * response actions through this interface, and read findings.
 */
export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export interface NewSecurityEvent {
  /** The tenant the event concerns; null for platform-wide events (visible to the platform tenant and admins). */
  tenant_id: string | null;
  /** Who reported it: `auth`, `http`, `limits`, `mesh`, `chaos`, `endpointsec`, `cloudsec`, `netsec`, ... */
  source: string;
  /** What happened, dotted: `auth.login_failed`, `endpoint.detection`, `netsec.sip_scan`, ... */
  category: string;
  severity: Severity;
  /** The account, user or device that acted (an e-mail, a user id, a device id). */
  actor?: string | null;
  /** The client or peer address, when one is known. */
  address?: string | null;
  kernel_id?: string | null;
  attributes?: Record<string, unknown>;
}

export interface SecurityEvent extends Required<NewSecurityEvent> {
  id: string;
  created_at: string;
}

export interface Finding {
  id: string;
  tenant_id: string | null;
  rule_id: string;
  rule_version: number;
  title: string;
  severity: Severity;
  /** What the rule grouped on (an e-mail, an address, a kernel id). */
  subject: string;
  state: 'open' | 'acknowledged' | 'resolved';
  evidence: string[];
  first_evidence_at: string;
  created_at: string;
  updated_at: string;
  acknowledged_at: string | null;
  resolved_at: string | null;
  resolved_by: string | null;
}

export interface NewSecurityAction {
  tenant_id: string | null;
  /** lock_account, revoke_sessions, disable_user, quarantine_device, isolate_member, isolate_node, block_address, ... */
  action: string;
  target_type: string;
  target_id: string;
  /** rule: a detection rule fired; operator: a person asked; connector: a security-suite call. */
  trigger: 'rule' | 'operator' | 'connector';
  /** The finding that caused it, when one did. */
  finding_id?: string | null;
  /** User id, or the component (`security`, `secsuite`). */
  actor: string;
  result: 'succeeded' | 'failed' | 'refused';
  detail?: Record<string, unknown>;
  /** Whether an undo exists for it (the caller that took it knows how). */
  undoable?: boolean;
}

export interface SecurityAction extends Required<Omit<NewSecurityAction, 'undoable'>> {
  id: string;
  undoable: boolean;
  undone_at: string | null;
  created_at: string;
}

/** Keys a plugin issues to a tenant (for the tenant report's "exposed keys"). */
export interface KeySource {
  name: string;
  /** refused_uses: left out where the kind of key does not count refusals. */
  list(tenantId: string): Promise<Array<{ id: string; name: string; created_at: string; last_used_at: string | null; refused_uses?: number }>>;
}

export interface SecurityService {
  /** Adds a kind of key to the tenant report's key review. */
  addKeySource(source: KeySource): void;
  /** Stores an event and evaluates the detection rules over it. */
  record(e: NewSecurityEvent): Promise<SecurityEvent>;
  /** Stores a response action (also written to the platform action log). */
  recordAction(a: NewSecurityAction): Promise<SecurityAction>;
  /** Marks a recorded action undone (the caller reversed its effect). */
  markUndone(actionId: string, by: string): Promise<void>;
  /** A tenant's security actions of some kinds, newest first (a page). */
  actions(tenantId: string, filter: { actions?: string[]; trigger?: NewSecurityAction['trigger'] }, limit: number, cursor?: string): Promise<{ actions: SecurityAction[]; next_cursor: string | null }>;
  /** A tenant's open and acknowledged findings, newest first. */
  activeFindings(tenantId: string, limit: number): Promise<Finding[]>;
  /** Recent events of a tenant in some categories (prefix match on `category`), newest first. */
  recentEvents(tenantId: string, categoryPrefix: string, sinceIso: string, limit: number): Promise<SecurityEvent[]>;
  /**
   * Disables a platform user of the tenant named by e-mail or id: login refused, every
   * session and token revoked. Null when the identity is not a user of that tenant.
   */
  disableUser(input: { tenant_id: string; identity: string; actor: string; trigger: NewSecurityAction['trigger']; reason: string }): Promise<SecurityAction | null>;
}

export const securityRef = createServiceRef<SecurityService>('security');
