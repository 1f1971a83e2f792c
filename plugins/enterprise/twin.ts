// The digital twin: each kernel modelled as a queue fitted from its task outcomes (arrival
// rate, mean service time, threads → utilisation), with KPI series bucketed over a window and
// forecast on the analytics kernel (Holt), back-tested on a holdout. The effect of a change
// (load x L, nodes ± d) uses the M/M/1 approximation of time in system: T ∝ 1 / (1 − ρ).
import type { Db } from '../../core/db';
import type { Mesh } from '../../core/mesh/mesh';
import type { Caller } from '../../core/roles';
import { insufficient } from './errors';

export const MIN_POINTS = 6;
const MAX_ROWS = 200_000;

export interface KernelModel {
  kernel: string;
  tasks: number;
  arrival_per_s: number;
  mean_service_ms: number | null;
  active_nodes: number;
  threads: number;
  threads_per_node: number;
  capacity_per_s: number | null;
  utilisation: number | null;
  error_rate: number | null;
}

export async function kernelModels(db: Db, mesh: Mesh, since: string, seconds: number): Promise<KernelModel[]> {
  await mesh.outcomesWriter.flush();
  const rows = (await db('task_outcomes').where('at', '>=', since).groupBy('kernel_id').select('kernel_id', db.raw('count(*) as n'), db.raw('avg(duration_ms) as service'), db.raw('sum(case when ok then 0 else 1 end) as failed'))) as Array<{ kernel_id: string; n: unknown; service: unknown; failed: unknown }>;
  const by = new Map(rows.map((r) => [r.kernel_id, r]));
  return [...mesh.kernelMap.keys()].sort().map((id) => {
    const k = mesh.kernelOf(id);
    const active = k.nodes.filter((n) => n.state === 'active');
    const threads = active.reduce((a, n) => a + n.threads, 0);
    const r = by.get(id);
    const n = Number(r?.n ?? 0);
    const service = n ? Number(r!.service) : null;
    const capacity = service && threads ? (threads * 1000) / service : null;
    const arrival = n / seconds;
    return {
      kernel: id,
      tasks: n,
      arrival_per_s: arrival,
      mean_service_ms: service,
      active_nodes: active.length,
      threads,
      threads_per_node: active.length ? threads / active.length : k.manifest.threadsPerNode,
      capacity_per_s: capacity,
      utilisation: capacity ? arrival / capacity : null,
      error_rate: n ? Number(r!.failed) / n : null,
    };
  });
}

export type SeriesKpi = 'load_per_bucket' | 'latency_p95_ms' | 'error_rate';

/** A KPI per time bucket over the window (buckets without tasks: load 0, others left out). */
export async function series(db: Db, mesh: Mesh, kernel: string, kpi: SeriesKpi, since: string, until: string, bucketSeconds: number) {
  await mesh.outcomesWriter.flush();
  const rows = (await db('task_outcomes').where('kernel_id', kernel).andWhere('at', '>=', since).orderBy('seq', 'desc').limit(MAX_ROWS).select('at', 'duration_ms', 'ok')) as Array<{ at: string; duration_ms: number; ok: unknown }>;
  const start = Date.parse(since);
  const count = Math.max(1, Math.ceil((Date.parse(until) - start) / (bucketSeconds * 1000)));
  const buckets: Array<{ d: number[]; failed: number }> = Array.from({ length: count }, () => ({ d: [], failed: 0 }));
  for (const r of rows) {
    const i = Math.min(count - 1, Math.floor((Date.parse(r.at) - start) / (bucketSeconds * 1000)));
    if (i < 0) continue;
    buckets[i]!.d.push(r.duration_ms);
    if (!r.ok) buckets[i]!.failed++;
  }
  const points: Array<{ at: string; value: number }> = [];
  buckets.forEach((b, i) => {
    const at = new Date(start + i * bucketSeconds * 1000).toISOString();
    if (kpi === 'load_per_bucket') points.push({ at, value: b.d.length });
    else if (b.d.length) {
      if (kpi === 'error_rate') points.push({ at, value: b.failed / b.d.length });
      else {
        const s = b.d.sort((x, y) => x - y);
        points.push({ at, value: s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)]! });
      }
    }
  });
  return points;
}

/** Holt forecast of a series on the analytics kernel, with the error of the same method on a holdout. */
export async function forecastWithBacktest(mesh: Mesh, caller: Caller, values: number[], horizon: number) {
  if (values.length < MIN_POINTS) throw insufficient(`${values.length} point(s) with data in the window; a forecast needs at least ${MIN_POINTS}`);
  const run = (s: number[], h: number) => mesh.run('analytics', 'forecast', { series: s, horizon: h }, { caller }) as Promise<{ forecast: number[]; method: string }>;
  const f = await run(values, horizon);
  const k = Math.max(1, Math.floor(values.length / 4));
  const train = values.slice(0, values.length - k);
  const actual = values.slice(values.length - k);
  const back = await run(train, k);
  const errs = actual.map((a, i) => Math.abs(a - back.forecast[i]!));
  const pct = actual.map((a, i) => (a === 0 ? null : Math.abs(a - back.forecast[i]!) / Math.abs(a))).filter((x): x is number => x !== null);
  return {
    forecast: f.forecast.map((x) => Math.max(0, x)),
    method: f.method,
    backtest: { holdout_points: k, mae: errs.reduce((a, b) => a + b, 0) / k, mape: pct.length ? pct.reduce((a, b) => a + b, 0) / pct.length : null },
  };
}

/** Utilisation after a change of load and threads. */
export function utilisationAfter(m: KernelModel, loadFactor: number, threadsDelta: number): number | null {
  if (m.utilisation === null) return null;
  const threads = m.threads + threadsDelta;
  return threads <= 0 ? Infinity : (m.utilisation * loadFactor * m.threads) / threads;
}

/** Time-in-system scaling of M/M/1: latency x (1 − ρ) / (1 − ρ'); null when ρ' ≥ 1 (the queue grows without bound). */
export function latencyFactor(rho: number, rhoAfter: number): number | null {
  if (rhoAfter >= 1 || rho >= 1) return null;
  return (1 - rho) / (1 - rhoAfter);
}
