import type { Db } from '../../core/db';
import { scoped, SEVERITIES, STATES, type visible } from './store';

type Scope = ReturnType<typeof visible>;

async function countBy(db: Db, scope: Scope, column: string): Promise<Record<string, number>> {
  const rows = await scoped(db('incidents'), scope).select(column).count({ n: '*' }).groupBy(column);
  return Object.fromEntries(rows.map((r: Record<string, unknown>) => [String((r[column] as string | null) ?? 'none'), Number(r.n)]));
}

/** Counts of the incidents the caller sees, by state, severity and domain (null domain: `none`). */
export async function summary(db: Db, scope: Scope) {
  const [byState, bySeverity, byDomain] = await Promise.all([countBy(db, scope, 'state'), countBy(db, scope, 'severity'), countBy(db, scope, 'domain')]);
  const zeroed = (keys: readonly string[], got: Record<string, number>) => Object.fromEntries(keys.map((k) => [k, got[k] ?? 0]));
  const total = Object.values(byState).reduce((a, b) => a + b, 0);
  return {
    total,
    active: (byState.open ?? 0) + (byState.mitigated ?? 0),
    by_state: zeroed(STATES, byState),
    by_severity: zeroed(SEVERITIES, bySeverity),
    by_domain: byDomain,
  };
}

export const BUCKET_MS = { hour: 3_600_000, day: 86_400_000 } as const;
export type Bucket = keyof typeof BUCKET_MS;

const mean = (xs: number[]) => (xs.length ? Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 1000) / 1000 : null);

/**
 * MTTA and MTTR over the incidents opened in [since, until), computed from their timelines:
 * - time to acknowledge: from `opened` to the first later entry made by a person (a manual
 *   mitigation, successful or not, a resolve or a close);
 * - time to resolve: from `opened` to the first `resolved` entry.
 * Each mean covers only the incidents that have that entry. The series counts the
 * `opened`, `resolved` and `closed` entries of every visible incident per bucket.
 */
export async function analytics(db: Db, scope: Scope, since: Date, until: Date, bucket: Bucket) {
  const s = since.toISOString();
  const u = until.toISOString();
  const opened = scoped(db('incidents'), scope).where('created_at', '>=', s).andWhere('created_at', '<', u);
  const incidents = await opened.clone().select('id', 'created_at');
  const entries = await db('incident_timeline')
    .whereIn('incident_id', opened.clone().select('id'))
    .whereNot('kind', 'opened')
    .orderBy('n', 'asc')
    .select('incident_id', 'kind', 'source', 'at');
  const firstAck = new Map<string, string>();
  const firstResolve = new Map<string, string>();
  for (const e of entries) {
    if (e.source === 'manual' && ['mitigated', 'mitigation_failed', 'resolved', 'closed'].includes(e.kind) && !firstAck.has(e.incident_id)) firstAck.set(e.incident_id, e.at);
    if (e.kind === 'resolved' && !firstResolve.has(e.incident_id)) firstResolve.set(e.incident_id, e.at);
  }
  const ack: number[] = [];
  const res: number[] = [];
  for (const i of incidents) {
    const start = Date.parse(i.created_at);
    if (firstAck.has(i.id)) ack.push((Date.parse(firstAck.get(i.id)!) - start) / 1000);
    if (firstResolve.has(i.id)) res.push((Date.parse(firstResolve.get(i.id)!) - start) / 1000);
  }

  const size = BUCKET_MS[bucket];
  const first = Math.floor(since.getTime() / size) * size;
  const series: Array<{ start: string; opened: number; resolved: number; closed: number }> = [];
  for (let t = first; t < until.getTime(); t += size) series.push({ start: new Date(t).toISOString(), opened: 0, resolved: 0, closed: 0 });
  const changes = await scoped(db('incident_timeline'), scope)
    .whereIn('kind', ['opened', 'resolved', 'closed'])
    .andWhere('at', '>=', s)
    .andWhere('at', '<', u)
    .select('kind', 'at');
  for (const c of changes) {
    const slot = series[Math.floor((Date.parse(c.at) - first) / size)];
    if (slot) slot[c.kind as 'opened' | 'resolved' | 'closed'] += 1;
  }
  return {
    since: s,
    until: u,
    bucket,
    incidents: incidents.length,
    acknowledged: ack.length,
    resolved: res.length,
    mtta_seconds: mean(ack),
    mttr_seconds: mean(res),
    series,
  };
}
