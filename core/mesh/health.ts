import type { Config } from '../config';
import type { MeshNode } from './node';
import type { Health } from './types';

/** A thread that never sent a heartbeat gets this long to boot before it counts as missing. */
export const BOOT_GRACE_MS = 10_000;

const rank: Record<Health, number> = { unknown: 0, healthy: 1, degraded: 2, unhealthy: 3 };

/**
 * A node's health from what was measured: heartbeats of every thread (missed beats,
 * event-loop delay, heap), the error rate and the p95 latency of recent tasks against the SLO.
 */
export function nodeHealth(node: MeshNode, slo: { latency_p95_ms: number; error_rate: number }, cfg: Config['mesh'], now = Date.now()): { health: Health; reason: string } {
  if (node.state === 'drained') return { health: 'unknown', reason: 'drained: the node has no threads' };
  if (!node.pool) return { health: 'unknown', reason: 'no threads' };
  if (node.liveThreads.size === 0) return { health: 'unhealthy', reason: 'no live worker thread' };
  const limit = cfg.heartbeatMs * cfg.missedHeartbeats;
  const reasons: Array<[Health, string]> = [];
  let beating = 0;
  for (const [id, t] of node.liveThreads) {
    if (!t.beat) {
      if (now - t.startedAt > Math.max(limit, BOOT_GRACE_MS)) reasons.push(['unhealthy', `thread ${id} sent no heartbeat since it started ${now - t.startedAt} ms ago`]);
      continue;
    }
    beating++;
    const since = now - t.beat.at;
    if (since > limit) {
      reasons.push(['unhealthy', `thread ${id} missed ${Math.floor(since / cfg.heartbeatMs)} heartbeats (last ${since} ms ago)`]);
      continue;
    }
    if (t.beat.loop_delay_p99_ms > cfg.health.loopDelayDegradedMs) {
      reasons.push(['degraded', `thread ${id} event-loop delay p99 ${t.beat.loop_delay_p99_ms} ms > ${cfg.health.loopDelayDegradedMs} ms`]);
    }
    const ratio = t.beat.heap_used_bytes / t.beat.heap_limit_bytes;
    if (ratio > cfg.health.heapDegradedRatio) reasons.push(['degraded', `thread ${id} heap at ${Math.round(ratio * 100)}% of its limit`]);
  }
  const windowStart = now - cfg.health.windowSeconds * 1000;
  const recent = node.samples.filter((s) => s.at >= windowStart);
  if (recent.length >= cfg.health.minSamples) {
    const failed = recent.filter((s) => !s.ok).length;
    const rate = failed / recent.length;
    const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;
    if (rate >= cfg.health.errorRateUnhealthy) reasons.push(['unhealthy', `error rate ${pct(rate)} of ${recent.length} tasks in ${cfg.health.windowSeconds} s`]);
    else if (rate > slo.error_rate) reasons.push(['degraded', `error rate ${pct(rate)} above the SLO of ${pct(slo.error_rate)}`]);
    const ms = recent.map((s) => s.ms).sort((a, b) => a - b);
    const p95 = ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.95) - 1)];
    if (p95 > slo.latency_p95_ms) reasons.push(['degraded', `latency p95 ${Math.round(p95)} ms above the SLO of ${slo.latency_p95_ms} ms`]);
  }
  if (reasons.length === 0) {
    if (beating === 0) return { health: 'unknown', reason: 'starting: no heartbeat yet' };
    return { health: 'healthy', reason: `${beating} thread(s) beating` };
  }
  reasons.sort((a, b) => rank[b[0]] - rank[a[0]]);
  return { health: reasons[0][0], reason: reasons.map((r) => r[1]).join('; ') };
}

/**
 * A kernel's (or the mesh's) health from its parts: unhealthy when every measured part is
 * unhealthy, degraded when any part is not healthy, unknown when nothing is measured.
 */
export function combine(parts: Array<{ id: string; health: Health; reason: string }>): { health: Health; reason: string } {
  const measured = parts.filter((p) => p.health !== 'unknown');
  if (measured.length === 0) return { health: 'unknown', reason: parts.length ? 'no part is measured yet' : 'no nodes' };
  const bad = measured.filter((p) => p.health !== 'healthy');
  if (bad.length === 0) return { health: 'healthy', reason: `${measured.length} of ${parts.length} healthy` };
  const reason = bad.map((p) => `${p.id}: ${p.health} (${p.reason})`).join('; ');
  if (bad.length === measured.length && bad.every((p) => p.health === 'unhealthy')) return { health: 'unhealthy', reason };
  return { health: 'degraded', reason };
}
