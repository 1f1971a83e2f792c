// Steady-state probes: real round trips (`mesh.ping`, routed like tasks, with the node's
// injected faults applied) on each target kernel, judged against the hypothesis.
import type { Mesh } from '../../../core/mesh/mesh';
import type { DomainMeasurement, Hypothesis, Measurement } from './schemas';

export interface ProbeConfig {
  /** Probes per round and domain. */
  count: number;
  concurrency: number;
  timeoutMs: number;
}

export interface Sample {
  ok: boolean;
  ms: number | null;
  reason: string;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[i]! * 1000) / 1000;
}

/** One round: `count` probes per domain, `concurrency` at a time. */
export async function probeRound(mesh: Mesh, domains: string[], cfg: ProbeConfig, signal?: AbortSignal): Promise<Map<string, Sample[]>> {
  const out = new Map<string, Sample[]>();
  await Promise.all(
    domains.map(async (domain) => {
      const samples: Sample[] = [];
      out.set(domain, samples);
      let left = cfg.count;
      const worker = async () => {
        while (left > 0 && !signal?.aborted) {
          left--;
          try {
            const p = await mesh.ping(domain, cfg.timeoutMs);
            samples.push({ ok: p.ok, ms: p.latency_ms, reason: p.reason });
          } catch (err) {
            samples.push({ ok: false, ms: null, reason: (err as Error).message });
          }
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, cfg.concurrency) }, worker));
    }),
  );
  return out;
}

export function judgeDomain(samples: Sample[], h: Hypothesis): DomainMeasurement {
  const ok = samples.filter((s) => s.ok);
  const latencies = ok.map((s) => s.ms ?? 0).sort((a, b) => a - b);
  const ratio = samples.length ? Math.round((ok.length / samples.length) * 10_000) / 10_000 : null;
  const p99 = percentile(latencies, 99);
  const held = ratio !== null && ratio >= h.min_success_ratio && p99 !== null && p99 <= h.max_latency_p99_ms;
  const reasons = new Map<string, number>();
  for (const s of samples) if (!s.ok) reasons.set(s.reason, (reasons.get(s.reason) ?? 0) + 1);
  return {
    probes: samples.length,
    succeeded: ok.length,
    failed: samples.length - ok.length,
    success_ratio: ratio,
    latency_p50_ms: percentile(latencies, 50),
    latency_p99_ms: p99,
    held,
    failures: [...reasons].slice(0, 5).map(([r, n]) => `${n}× ${r}`),
  };
}

/** Judges every domain's samples; the measurement holds when every domain holds. */
export function judge(samples: Map<string, Sample[]>, h: Hypothesis, startedAt: string): Measurement {
  const domains: Measurement['domains'] = {};
  for (const [d, s] of samples) domains[d] = judgeDomain(s, h);
  return { started_at: startedAt, ended_at: new Date().toISOString(), held: Object.values(domains).every((d) => d.held), domains };
}

/** Adds one round's samples to a running total. */
export function merge(into: Map<string, Sample[]>, round: Map<string, Sample[]>): void {
  for (const [d, s] of round) into.set(d, [...(into.get(d) ?? []), ...s]);
}
