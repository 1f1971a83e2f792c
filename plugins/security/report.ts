import type { AccountsService } from '../../core/contracts/accounts';
import type { Finding, KeySource } from '../../core/contracts/security';
import type { Db } from '../../core/db';
import type { Knex } from 'knex';
import { SEVERITIES } from '../../core/contracts/security';
import { actionOf, findingOf } from './store';

type Row = Record<string, any>;
const DAY = 86_400_000;
/** A user whose last login (session start) is older than this is listed as inactive. */
export const INACTIVE_DAYS = 30;
/** A key older than this is due for rotation. */
export const KEY_ROTATION_DAYS = 90;

/** Which tenant rows a query may read: one tenant, or (admins with no filter) every one. */
export type TenantFilter = { tenantId: string | null; platform: boolean } | null;

export function scoped(q: Knex.QueryBuilder, f: TenantFilter): Knex.QueryBuilder {
  if (!f) return q;
  return q.where((w) => (f.platform ? w.where('tenant_id', f.tenantId).orWhereNull('tenant_id') : w.where('tenant_id', f.tenantId)));
}

const seconds = (a: string, b: string) => (Date.parse(b) - Date.parse(a)) / 1000;
function stats(values: number[]) {
  if (!values.length) return { count: 0, mean: null, median: null, max: null };
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return { count: s.length, mean: s.reduce((a, b) => a + b, 0) / s.length, median: s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2, max: s[s.length - 1] };
}

/** Counts by severity and category, findings by state and rule, MTTD and MTTR over a window. */
export async function metrics(db: Db, f: TenantFilter, from: string, to: string) {
  const inWindow = (table: string, col = 'created_at') => scoped(db(table), f).where(col, '>=', from).where(col, '<', to);
  const bySeverity: Row[] = await inWindow('security_events').select('severity').count({ n: '*' }).groupBy('severity');
  const byCategory: Row[] = await inWindow('security_events').select('category').count({ n: '*' }).groupBy('category').orderBy('category');
  const findings: Finding[] = (await inWindow('security_findings')).map((r: Row) => findingOf(r));
  const resolved: Finding[] = (await inWindow('security_findings', 'resolved_at')).map((r: Row) => findingOf(r));
  const actions: Row[] = await inWindow('security_actions').select('action', 'result').count({ n: '*' }).groupBy('action', 'result').orderBy('action');
  const severity = Object.fromEntries(SEVERITIES.map((s) => [s, 0]));
  for (const r of bySeverity) severity[r.severity as string] = Number(r.n);
  const rules = new Map<string, number>();
  for (const x of findings) rules.set(x.rule_id, (rules.get(x.rule_id) ?? 0) + 1);
  return {
    window: { from, to },
    events: { total: Object.values(severity).reduce((a, b) => a + b, 0), by_severity: severity, by_category: byCategory.map((r) => ({ category: String(r.category), count: Number(r.n) })) },
    findings: {
      total: findings.length,
      by_state: { open: findings.filter((x) => x.state === 'open').length, acknowledged: findings.filter((x) => x.state === 'acknowledged').length, resolved: findings.filter((x) => x.state === 'resolved').length },
      rules_firing: [...rules].map(([rule_id, count]) => ({ rule_id, count })).sort((a, b) => b.count - a.count || a.rule_id.localeCompare(b.rule_id)),
    },
    actions: actions.map((r) => ({ action: String(r.action), result: String(r.result), count: Number(r.n) })),
    mttd_seconds: { ...stats(findings.map((x) => seconds(x.first_evidence_at, x.created_at))), method: 'finding created_at minus its first evidence event, findings created in the window' },
    mttr_seconds: { ...stats(resolved.map((x) => seconds(x.created_at, x.resolved_at!))), method: 'finding resolved_at (resolving action or operator) minus created_at, findings resolved in the window' },
  };
}

/** One tenant's posture: findings, responses, keys that want attention, users without a recent login. */
export async function tenantReport(db: Db, accounts: AccountsService, tenantId: string, now: Date, keySources: KeySource[]) {
  const since = new Date(now.getTime() - 30 * DAY).toISOString();
  const f = { tenantId, platform: false };
  const active = (await scoped(db('security_findings'), f).whereIn('state', ['open', 'acknowledged']).orderBy('created_at', 'desc').limit(100)).map(findingOf);
  const counts: Row[] = await scoped(db('security_findings'), f).select('state').count({ n: '*' }).groupBy('state');
  const actions = (await scoped(db('security_actions'), f).where('created_at', '>=', since).orderBy('created_at', 'desc').limit(100)).map(actionOf);
  const keys = [];
  for (const source of keySources) {
    for (const k of await source.list(tenantId)) {
      const age = (now.getTime() - Date.parse(k.created_at)) / DAY;
      const idle = (now.getTime() - Date.parse(k.last_used_at ?? k.created_at)) / DAY;
      const reasons = [
        ...(age > KEY_ROTATION_DAYS ? [`older than ${KEY_ROTATION_DAYS} days`] : []),
        ...(idle > INACTIVE_DAYS ? [`unused for ${INACTIVE_DAYS} days`] : []),
        ...(k.refused_uses ? [`${k.refused_uses} refused uses (bad signature or quarantined device)`] : []),
      ];
      if (reasons.length) keys.push({ source: source.name, id: k.id, name: k.name, created_at: k.created_at, last_used_at: k.last_used_at, reasons });
    }
  }
  const users = await db('users').where({ tenant_id: tenantId }).select('id', 'email', 'role', 'created_at');
  const last = await accounts.lastSignIns(tenantId);
  const inactive = users
    .map((u) => ({ id: u.id as string, email: u.email as string, role: u.role as string, last_login_at: last.get(u.id) ?? null }))
    .filter((u) => !u.last_login_at || u.last_login_at < since);
  const byState = { open: 0, acknowledged: 0, resolved: 0 } as Record<string, number>;
  for (const r of counts) byState[r.state as string] = Number(r.n);
  return {
    tenant_id: tenantId,
    generated_at: now.toISOString(),
    findings: { by_state: byState, active },
    actions,
    exposed_keys: keys,
    users_without_recent_login: inactive,
    method: `active findings; actions of the last 30 days; keys older than ${KEY_ROTATION_DAYS} days, unused for ${INACTIVE_DAYS} days or with refused uses; users whose last session started more than ${INACTIVE_DAYS} days ago (or never)`,
  };
}
