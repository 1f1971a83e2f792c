import type { Db } from '../../../core/db';
import type { Mesh } from '../../../core/mesh/mesh';
import type { RecordRow } from './service';

interface Criterion {
  metric: 'successful_tasks' | 'success_ratio' | 'p95_latency_ms';
  target: number;
  kernel?: string;
}

/** Latencies sent to the analytics kernel at most (the newest). */
const SAMPLE = 10_000;

/**
 * Progress of a proof of value: the tenant's task outcomes since the environment was defined,
 * against each criterion. The p95 is computed by the analytics kernel's `percentiles` task.
 */
export async function povProgress(db: Db, mesh: Mesh, row: RecordRow) {
  const spec = JSON.parse(row.spec) as { criteria: Criterion[]; duration_days: number };
  const from = row.created_at;
  const to = new Date().toISOString();
  const endsAt = new Date(Date.parse(row.created_at) + spec.duration_days * 86400_000).toISOString();
  const inputs: Record<string, unknown> = {};
  const criteria = [];
  for (const c of spec.criteria) {
    const base = () => {
      const q = db('task_outcomes').where({ tenant_id: row.customer_tenant }).andWhere('at', '>=', from);
      if (c.kernel) q.andWhere({ kernel_id: c.kernel });
      return q;
    };
    const counts = (await base().select(db.raw('count(*) as n'), db.raw('sum(case when ok then 1 else 0 end) as good')).first()) as { n: number | string; good: number | string | null };
    const n = Number(counts.n);
    const good = Number(counts.good ?? 0);
    inputs[`${c.kernel ?? 'all'}_tasks`] = n;
    let measured: number | null = null;
    let met = false;
    if (c.metric === 'successful_tasks') {
      measured = good;
      met = good >= c.target;
    } else if (c.metric === 'success_ratio') {
      measured = n ? good / n : null;
      met = measured !== null && measured >= c.target;
    } else {
      const rows = (await base().where({ ok: true }).orderBy('at', 'desc').limit(SAMPLE).select('duration_ms')) as Array<{ duration_ms: number }>;
      if (rows.length) {
        const r = (await mesh.run('analytics', 'percentiles', { values: rows.map((x) => Number(x.duration_ms)), percentiles: [95] })) as { percentiles: Array<{ value: number }> };
        measured = Math.round(r.percentiles[0]!.value * 1000) / 1000;
        met = measured <= c.target;
      }
    }
    criteria.push({ ...c, measured, met });
  }
  return {
    window: { from, to, ends_at: endsAt },
    method: 'task outcomes of the tenant in the window: successful count, success ratio, p95 run time (analytics kernel, percentiles)',
    inputs,
    criteria,
    met: criteria.every((c) => c.met),
  };
}
