// A load generator in its own thread, so that the requests it makes are timed apart from
// the host's event loop it loads. It speaks HTTP to the loopback address it is given only.
import { parentPort, workerData } from 'node:worker_threads';

export interface LoadJob {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | null;
  /** Requests started per second (open loop); with `iterations`, a closed loop of one request at a time. */
  rate: number;
  durationMs: number;
  concurrency: number;
  iterations?: number;
}

export interface LoadResult {
  sent: number;
  ok: number;
  errors: Record<string, number>;
  /** Requests not started because `concurrency` were already in flight. */
  dropped: number;
  elapsed_ms: number;
  throughput_per_s: number;
  latency_ms: { p50: number; p90: number; p95: number; p99: number; max: number; mean: number } | null;
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

async function run(job: LoadJob): Promise<LoadResult> {
  if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(job.url)) throw new Error('loopback targets only');
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  let sent = 0;
  let ok = 0;
  let dropped = 0;
  let inFlight = 0;
  const one = async () => {
    sent++;
    inFlight++;
    const t0 = performance.now();
    try {
      const res = await fetch(job.url, { method: job.method, headers: job.headers, body: job.body ?? undefined });
      await res.arrayBuffer();
      latencies.push(performance.now() - t0);
      if (res.status < 400) ok++;
      else errors[String(res.status)] = (errors[String(res.status)] ?? 0) + 1;
    } catch (err) {
      const k = `network:${(err as Error).cause ? String(((err as Error).cause as Error).message).slice(0, 60) : 'error'}`;
      errors[k] = (errors[k] ?? 0) + 1;
    } finally {
      inFlight--;
    }
  };
  const start = performance.now();
  if (job.iterations) {
    for (let i = 0; i < job.iterations; i++) await one();
  } else {
    const pending = new Set<Promise<void>>();
    const total = Math.round((job.rate * job.durationMs) / 1000);
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / job.rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (inFlight >= job.concurrency) {
        dropped++;
        continue;
      }
      const p = one();
      pending.add(p);
      void p.finally(() => pending.delete(p));
    }
    await Promise.all(pending);
  }
  const elapsed = performance.now() - start;
  latencies.sort((a, b) => a - b);
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  return {
    sent,
    ok,
    errors,
    dropped,
    elapsed_ms: r3(elapsed),
    throughput_per_s: r3((latencies.length / elapsed) * 1000),
    latency_ms: latencies.length
      ? { p50: r3(percentile(latencies, 50)), p90: r3(percentile(latencies, 90)), p95: r3(percentile(latencies, 95)), p99: r3(percentile(latencies, 99)), max: r3(latencies[latencies.length - 1]!), mean: r3(latencies.reduce((a, b) => a + b, 0) / latencies.length) }
      : null,
  };
}

if (parentPort) {
  run(workerData as LoadJob).then(
    (r) => parentPort!.postMessage({ ok: true, result: r }),
    (err: Error) => parentPort!.postMessage({ ok: false, error: err.message }),
  );
}
