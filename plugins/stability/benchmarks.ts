import type { Caller } from '../../core/roles';
import type { Services } from '../../core/services';
import { runLoad } from './load';
import type { Run, Runs } from './store';

/**
 * The fixed suite: kernel micro-benchmarks (one task at a time through the mesh: dispatch,
 * worker run and answer) and API micro-benchmarks (one request at a time over loopback HTTP
 * from a worker thread). A benchmark whose kernel is not loaded is reported as skipped.
 */
export const SUITE = [
  { name: 'kernel.analytics.describe_1k', kind: 'kernel', domain: 'analytics', task: 'describe', input: { values: Array.from({ length: 1000 }, (_, i) => (i * 7919) % 1000) }, iterations: 40 },
  { name: 'kernel.analytics.regression_1k', kind: 'kernel', domain: 'analytics', task: 'regression', input: { x: Array.from({ length: 1000 }, (_, i) => i), y: Array.from({ length: 1000 }, (_, i) => 2 * i + (i % 7)) }, iterations: 40 },
  { name: 'kernel.trading.price_option', kind: 'kernel', domain: 'trading', task: 'price_option', input: { type: 'call', spot: 100, strike: 105, rate: 0.03, volatility: 0.2, time_years: 0.5 }, iterations: 40 },
  { name: 'api.get_health', kind: 'api', path: '/health/', iterations: 60 },
  { name: 'api.get_openapi', kind: 'api', path: '/openapi.json', iterations: 20 },
] as const;

export interface BenchResult {
  name: string;
  kind: 'kernel' | 'api';
  status: 'measured' | 'skipped';
  reason: string | null;
  iterations: number;
  mean_ms: number | null;
  p50_ms: number | null;
  p95_ms: number | null;
  ops_per_s: number | null;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;
function pct(sorted: number[], p: number) {
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  return sorted[lo]! + (sorted[Math.ceil(rank)]! - sorted[lo]!) * (rank - lo);
}

export async function startBenchmarks(services: Pick<Services, 'mesh'>, runs: Runs, caller: Caller, base: string): Promise<Run> {
  const run = await runs.create('benchmark', null, { suite: SUITE.map((b) => b.name) }, caller.id);
  void (async () => {
    const running = await runs.move(run, 'running');
    try {
      const results: BenchResult[] = [];
      for (const b of SUITE) {
        if (b.kind === 'kernel') {
          if (!services.mesh.kernelMap.has(b.domain)) {
            results.push({ name: b.name, kind: 'kernel', status: 'skipped', reason: `kernel ${b.domain} is not loaded`, iterations: 0, mean_ms: null, p50_ms: null, p95_ms: null, ops_per_s: null });
            continue;
          }
          const times: number[] = [];
          const t0 = performance.now();
          for (let i = 0; i < b.iterations; i++) {
            const s = performance.now();
            await services.mesh.run(b.domain, b.task, b.input, { caller });
            times.push(performance.now() - s);
          }
          const total = performance.now() - t0;
          times.sort((x, y) => x - y);
          results.push({ name: b.name, kind: 'kernel', status: 'measured', reason: null, iterations: b.iterations, mean_ms: r3(times.reduce((a, x) => a + x, 0) / times.length), p50_ms: r3(pct(times, 50)), p95_ms: r3(pct(times, 95)), ops_per_s: r3((b.iterations / total) * 1000) });
        } else {
          const r = await runLoad({ url: base + b.path, method: 'GET', headers: {}, body: null, rate: 1, durationMs: 0, concurrency: 1, iterations: b.iterations });
          const failed = r.sent - r.ok;
          if (failed || !r.latency_ms) {
            results.push({ name: b.name, kind: 'api', status: 'skipped', reason: `${failed} of ${r.sent} requests failed: ${JSON.stringify(r.errors)}`, iterations: r.sent, mean_ms: null, p50_ms: null, p95_ms: null, ops_per_s: null });
            continue;
          }
          results.push({ name: b.name, kind: 'api', status: 'measured', reason: null, iterations: r.sent, mean_ms: r.latency_ms.mean, p50_ms: r.latency_ms.p50, p95_ms: r.latency_ms.p95, ops_per_s: r.throughput_per_s });
        }
      }
      await runs.move(running, 'succeeded', { result: { benchmarks: results } });
    } catch (err) {
      await runs.move(running, 'failed', { error: (err as Error).message }).catch(() => undefined);
    }
  })();
  return run;
}

const HISTORY = 10;

/**
 * Per benchmark, its p50 over the runs (oldest first), and a regression flag: the latest p50
 * is above the baseline (mean of up to 10 earlier runs) by more than 3 standard deviations
 * of the baseline and by more than 20 %. Fewer than 3 earlier runs: not judged.
 */
export function trends(runs: Array<Run<unknown, { benchmarks: BenchResult[] }>>) {
  const byName = new Map<string, Array<{ run_id: string; at: string; p50_ms: number; mean_ms: number }>>();
  for (const r of [...runs].reverse()) {
    for (const b of r.result?.benchmarks ?? []) {
      if (b.status !== 'measured') continue;
      const list = byName.get(b.name) ?? [];
      list.push({ run_id: r.id, at: r.finished_at ?? r.created_at, p50_ms: b.p50_ms!, mean_ms: b.mean_ms! });
      byName.set(b.name, list);
    }
  }
  return [...byName.entries()].map(([name, points]) => {
    const latest = points[points.length - 1]!;
    const earlier = points.slice(0, -1).slice(-HISTORY).map((p) => p.p50_ms);
    let baseline: { mean_ms: number; stddev_ms: number; runs: number } | null = null;
    let regression: boolean | null = null;
    if (earlier.length >= 3) {
      const mean = earlier.reduce((a, x) => a + x, 0) / earlier.length;
      const sd = Math.sqrt(earlier.reduce((a, x) => a + (x - mean) ** 2, 0) / (earlier.length - 1));
      baseline = { mean_ms: r3(mean), stddev_ms: r3(sd), runs: earlier.length };
      regression = latest.p50_ms > mean + 3 * sd && latest.p50_ms > mean * 1.2;
    }
    return { name, points, latest_p50_ms: latest.p50_ms, baseline, regression, change_pct: baseline ? r3(((latest.p50_ms - baseline.mean_ms) / baseline.mean_ms) * 100) : null };
  });
}
