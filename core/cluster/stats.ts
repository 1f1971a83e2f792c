// /mesh/stats for the whole cluster (docs/scale-out.md). Counters add up and each node's
// figures come from the host that runs it. A kernel's run and wait percentiles do not add up,
// so each host sends its distribution (the value at every percent, and at 99.5 and 99.9) and
// the merged percentile is read off the count-weighted sum of the hosts' distributions.
import type { RecordableHistogram } from 'node:perf_hooks';
import type { Mesh } from '../mesh/mesh';
import { timing } from '../mesh/node';
import type { MeshStats, Timing } from '../mesh/types';
import { statsOf } from '../mesh/views';

const GRID = [...Array.from({ length: 99 }, (_, i) => i + 1), 99.5, 99.9, 100];

/** A host's distribution of one timing: value (ms) at each GRID percentile, with count, mean and max. */
export interface Dist {
  count: number;
  mean: number;
  max: number;
  at: number[];
}

export function dist(h: RecordableHistogram): Dist {
  const t = timing(h);
  return { count: t.count, mean: t.mean, max: t.max, at: t.count ? GRID.map((q) => Math.round(h.percentile(q)) / 1000) : [] };
}

/** What a host answers for the cluster view: its own stats, each node with its host, and its kernels' distributions. */
export interface HostStats {
  stats: MeshStats;
  dists: Record<string, { run: Dist; wait: Dist }>;
}

export function hostStats(mesh: Mesh): HostStats {
  const stats = statsOf(mesh);
  const dists: HostStats['dists'] = {};
  for (const k of mesh.kernelMap.values()) dists[k.id] = { run: dist(k.runTime), wait: dist(k.waitTime) };
  return { stats, dists };
}

/** The q-th percentile of several hosts' distributions together. */
function percentileOf(ds: Dist[], q: number): number {
  const total = ds.reduce((a, d) => a + d.count, 0);
  // The share of host d's samples at or below v: the highest grid percentile whose value is <= v.
  const below = (d: Dist, v: number) => {
    let share = 0;
    for (let i = 0; i < d.at.length && d.at[i] <= v; i++) share = GRID[i] / 100;
    return share * d.count;
  };
  const candidates = [...new Set(ds.flatMap((d) => d.at))].sort((a, b) => a - b);
  for (const v of candidates) if (ds.reduce((a, d) => a + below(d, v), 0) >= (q / 100) * total - 1e-9) return v;
  return candidates[candidates.length - 1] ?? 0;
}

export function mergeDists(ds: Dist[]): Timing {
  const live = ds.filter((d) => d.count > 0);
  const count = live.reduce((a, d) => a + d.count, 0);
  if (count === 0) return timing(null);
  const r = (v: number) => Math.round(v * 1000) / 1000;
  if (live.length === 1) {
    const d = live[0];
    return { count, mean: d.mean, p50: d.at[49], p90: d.at[89], p99: d.at[98], max: d.max };
  }
  return {
    count,
    mean: r(live.reduce((a, d) => a + d.mean * d.count, 0) / count),
    p50: percentileOf(live, 50),
    p90: percentileOf(live, 90),
    p99: percentileOf(live, 99),
    max: Math.max(...live.map((d) => d.max)),
  };
}

/** Merges every answering host's stats into one view; `hosts` names those whose figures are in. */
export function mergeStats(parts: Array<{ host: string; part: HostStats }>): MeshStats & { hosts: string[] } {
  const kernels = new Map<string, MeshStats['kernels'][number]>();
  const dists = new Map<string, { run: Dist[]; wait: Dist[] }>();
  for (const { part } of parts) {
    for (const k of part.stats.kernels) {
      const into = kernels.get(k.kernel_id);
      if (!into) kernels.set(k.kernel_id, { ...k, nodes: [...k.nodes] });
      else {
        into.tasks_run += k.tasks_run;
        into.tasks_failed += k.tasks_failed;
        into.in_flight += k.in_flight;
        into.queued += k.queued;
        into.nodes.push(...k.nodes);
      }
      const d = part.dists[k.kernel_id];
      if (!d) continue;
      const ds = dists.get(k.kernel_id) ?? { run: [], wait: [] };
      ds.run.push(d.run);
      ds.wait.push(d.wait);
      dists.set(k.kernel_id, ds);
    }
  }
  const list = [...kernels.values()].sort((a, b) => a.kernel_id.localeCompare(b.kernel_id));
  for (const k of list) {
    const ds = dists.get(k.kernel_id);
    if (ds) {
      k.run_time_ms = mergeDists(ds.run);
      k.wait_time_ms = mergeDists(ds.wait);
    }
  }
  const total = (f: (k: MeshStats['kernels'][number]) => number) => list.reduce((a, k) => a + f(k), 0);
  return {
    timestamp: new Date().toISOString(),
    totals: { tasks_run: total((k) => k.tasks_run), tasks_failed: total((k) => k.tasks_failed), in_flight: total((k) => k.in_flight), queued: total((k) => k.queued) },
    kernels: list,
    hosts: parts.map((p) => p.host).sort(),
  };
}

/**
 * The cluster's stats from this host: its own and every live host's (asked over the control
 * bus at once); a host that does not answer in time is left out (and not named in `hosts`).
 */
export async function clusterStats(mesh: Mesh): Promise<MeshStats & { hosts: string[] }> {
  const bus = mesh.bus;
  if (!bus || !mesh.hostId) return { ...statsOf(mesh), hosts: [] };
  const own = { host: mesh.hostId, part: hostStats(mesh) };
  const others = mesh.hosts().filter((h) => h.live && !h.this_host && h.host_id).map((h) => h.host_id!);
  const answers = await Promise.all(others.map(async (host) => {
    const a = await bus.request(host, host, 'mesh.stats', {}, { what: 'its stats' });
    return a.status === 200 ? { host, part: a.body as HostStats } : null;
  }));
  return mergeStats([own, ...answers.filter((a): a is { host: string; part: HostStats } => a !== null)]);
}
