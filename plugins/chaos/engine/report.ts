// The resilience report and the experiment history (both scoped to the caller's tenant).
import { decodeCursor, encodeCursor } from '../../../core/actions';
import type { Db } from '../../../core/db';
import { invalid } from '../../../core/errors';
import type { Experiment, Measurement, Report } from './schemas';
import { withInjections } from './store';

export const SCORE_FORMULA =
  'resilience_score = 100 × mean over completed experiments of s, where s = 1 when the steady state held during the injection and after rollback (passed), 0.5 when it deviated but recovered within chaos.recoveryTimeoutSeconds, 0 when it did not recover; null when no experiment completed. Per domain, s uses that domain\'s own measurements.';

type Row = Record<string, any>;

export async function listExperiments(db: Db, tenantId: string, q: { limit: number; cursor?: string; status?: string; scenario_id?: string; domain?: string }): Promise<{ experiments: Experiment[]; next_cursor: string | null }> {
  const query = db('chaos_experiments').where({ tenant_id: tenantId }).orderBy([{ column: 'started_at', order: 'desc' }, { column: 'id', order: 'desc' }]);
  if (q.status) query.andWhere({ status: q.status });
  if (q.scenario_id) query.andWhere({ scenario_id: q.scenario_id });
  if (q.cursor) {
    let at: string, id: string;
    try {
      [at, id] = decodeCursor(q.cursor) as [string, string];
    } catch {
      throw invalid(['query', 'cursor'], 'malformed cursor');
    }
    query.andWhere((w) => w.where('started_at', '<', at).orWhere((x) => x.where('started_at', at).andWhere('id', '<', id)));
  }
  const rows: Row[] = q.domain ? (await query.limit(5000)).filter((r: Row) => (JSON.parse(r.target_domains) as string[]).includes(q.domain!)).slice(0, q.limit + 1) : await query.limit(q.limit + 1);
  const page = await withInjections(db, rows.slice(0, q.limit));
  const last = rows.length > q.limit ? rows[q.limit - 1] : undefined;
  return { experiments: page, next_cursor: last ? encodeCursor(last.started_at, last.id) : null };
}

interface Tally {
  experiments_run: number;
  completed: number;
  passed: number;
  deviated: number;
  recovered: number;
  aborted: number;
  failed: number;
  ttr: number[];
  scores: number[];
}

const empty = (): Tally => ({ experiments_run: 0, completed: 0, passed: 0, deviated: 0, recovered: 0, aborted: 0, failed: 0, ttr: [], scores: [] });

function add(t: Tally, status: string, held: { during: boolean; after: boolean } | null, ttr: number | null): void {
  t.experiments_run++;
  if (status === 'aborted') t.aborted++;
  if (status === 'failed') t.failed++;
  if (status !== 'completed' || !held) return;
  t.completed++;
  if (held.after) t.recovered++;
  if (held.during && held.after) t.passed++;
  else t.deviated++;
  if (held.after && ttr !== null) t.ttr.push(ttr);
  t.scores.push(held.during && held.after ? 1 : held.after ? 0.5 : 0);
}

const out = (t: Tally) => ({
  experiments_run: t.experiments_run,
  completed: t.completed,
  passed: t.passed,
  deviated: t.deviated,
  recovered: t.recovered,
  aborted: t.aborted,
  failed: t.failed,
  mean_time_to_recover_ms: t.ttr.length ? Math.round(t.ttr.reduce((a, b) => a + b, 0) / t.ttr.length) : null,
  resilience_score: t.scores.length ? Math.round((100 * t.scores.reduce((a, b) => a + b, 0)) / t.scores.length * 10) / 10 : null,
});

/** Experiments that ended (running ones are left out), per target domain and overall. */
export async function report(db: Db, tenantId: string, since?: string): Promise<Report> {
  const q = db('chaos_experiments').where({ tenant_id: tenantId }).whereNot({ status: 'running' }).select('status', 'target_domains', 'during', 'after', 'time_to_recover_ms', 'effects');
  if (since) q.andWhere('started_at', '>=', since);
  const rows: Row[] = await q;
  const overall = empty();
  const domains = new Map<string, Tally>();
  for (const r of rows) {
    const during = r.during ? (JSON.parse(r.during) as Measurement) : null;
    const after = r.after ? (JSON.parse(r.after) as Measurement) : null;
    const both = during && after ? { during: during.held, after: after.held } : null;
    add(overall, r.status, both, r.time_to_recover_ms === null ? null : Number(r.time_to_recover_ms));
    const byDomain = (JSON.parse(r.effects) as { time_to_recover_ms_by_domain?: Record<string, number | null> }).time_to_recover_ms_by_domain ?? {};
    for (const d of JSON.parse(r.target_domains) as string[]) {
      const t = domains.get(d) ?? empty();
      domains.set(d, t);
      const held = during && after ? { during: during.domains[d]?.held ?? false, after: after.domains[d]?.held ?? false } : null;
      add(t, r.status, held, byDomain[d] ?? null);
    }
  }
  return {
    generated_at: new Date().toISOString(),
    since: since ?? null,
    overall: out(overall),
    domains: [...domains.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([domain, t]) => ({ domain, ...out(t) })),
    formula: SCORE_FORMULA,
  };
}
