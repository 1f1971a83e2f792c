// Placement of a workload: every region/node of every provider is a candidate; each is measured
// (free threads, p95 latency of its recent tasks, cost of a unit from the provider's price),
// checked against the requirements and the tenant's placement policies, and the rest ranked
// by the objective the value policy gives (cost for low-value work, latency for high-value).
import type { ComputeInventory, Provider } from '../../core/contracts/compute';
import type { Db } from '../../core/db';
import type { Mesh } from '../../core/mesh/mesh';
import { outcomeCounts, outcomePercentiles } from '../../core/mesh/outcomes';
import { fromMicros, toMicros } from '../../core/money';
import type { PlacementRules, ValueRules } from './policies';

export interface Requirements {
  gpu_memory?: number;
  latency_target_ms?: number;
}

export interface Candidate {
  provider: string;
  region: string;
  node_id: string | null;
  residency: string | null;
  free_threads: number;
  threads: number;
  gpu_memory_free_gb: number;
  tasks_measured: number;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
  /** Micro-units of `currency` for one unit (one task of median length); null without a price. */
  cost_micros: number | null;
  currency: string | null;
  reasons: string[];
  score: number | null;
}

export type Objective = 'cost' | 'latency' | 'balanced';

export const MEASURE_WINDOW_MS = 15 * 60_000;

/** The candidates of every provider, measured now. Outside providers without a client give none. */
export async function candidates(mesh: Mesh, db: Db, inv: ComputeInventory, kernel: string, now: Date): Promise<{ list: Candidate[]; excluded: Array<{ provider: string; reason: string }> }> {
  const list: Candidate[] = [];
  const excluded: Array<{ provider: string; reason: string }> = [];
  const since = new Date(now.getTime() - MEASURE_WINDOW_MS).toISOString();
  await mesh.outcomesWriter.flush();
  for (const p of inv.providers()) {
    if (p.kind !== 'local') {
      excluded.push({ provider: p.id, reason: p.status === 'not_configured' ? `not configured (set ${p.config_key})` : `no ${p.kind} API client in this build` });
      continue;
    }
    const gpuFree = (await freeGpus(inv, p.id))[0]?.free_gb ?? 0;
    const k = mesh.kernels().find((x) => x.id === kernel);
    for (const n of k?.nodes ?? []) {
      if (n.state !== 'active') continue;
      const f = { kernelId: kernel, since, nodeId: n.id };
      const { tasks } = await outcomeCounts(db, f);
      const ps = await outcomePercentiles(db, f, 'duration_ms', [50, 95], tasks);
      list.push(measured(p, n.id, n.threads, n.in_flight, gpuFree, tasks, ps));
    }
  }
  return { list, excluded };
}

/**
 * The provider's GPUs no workload holds (a device is held whole), with their free memory as
 * read, most free first.
 */
export async function freeGpus(inv: ComputeInventory, provider: string) {
  const held = new Set((await inv.allocations(null)).map((a) => a.device_id));
  return (await inv.gpus(provider))
    .filter((g) => !held.has(g.id) && g.memory_total_mb !== null)
    .map((g) => ({ device: g, free_gb: Math.round(((g.memory_total_mb! - (g.memory_used_mb ?? 0)) / 1024) * 100) / 100 }))
    .sort((a, b) => b.free_gb - a.free_gb);
}

function measured(p: Provider, nodeId: string, threads: number, inFlight: number, gpuFree: number, tasks: number, ps: number[] | null): Candidate {
  const region = p.regions[0]!;
  const p50 = ps ? ps[0]! : null;
  // A unit is one task of median length at the provider's CPU-hour price.
  const cost = p.price && p50 !== null ? Math.round((toMicros(p.price.cpu_hour, ['price']) * p50) / 3_600_000) : null;
  return {
    provider: p.id,
    region: region.id,
    node_id: nodeId,
    residency: region.residency,
    free_threads: Math.max(0, threads - inFlight),
    threads,
    gpu_memory_free_gb: gpuFree,
    tasks_measured: tasks,
    latency_p50_ms: p50 === null ? null : Math.round(p50 * 1000) / 1000,
    latency_p95_ms: ps ? Math.round(ps[1]! * 1000) / 1000 : null,
    cost_micros: cost,
    currency: p.price?.currency ?? null,
    reasons: [],
    score: null,
  };
}

/** Marks each candidate with the requirements and policy rules it fails. */
export function check(list: Candidate[], req: Requirements, policies: Array<{ name: string; rules: PlacementRules }>): void {
  for (const c of list) {
    if (req.gpu_memory !== undefined && req.gpu_memory > 0 && c.gpu_memory_free_gb < req.gpu_memory) c.reasons.push(`gpu_memory: ${c.gpu_memory_free_gb} GB free, ${req.gpu_memory} GB required`);
    if (req.latency_target_ms !== undefined) {
      if (c.latency_p95_ms === null) c.reasons.push('latency_target_ms: no tasks measured in the last 15 minutes');
      else if (c.latency_p95_ms > req.latency_target_ms) c.reasons.push(`latency_target_ms: p95 ${c.latency_p95_ms} ms above ${req.latency_target_ms} ms`);
    }
    for (const { name, rules } of policies) {
      if (rules.allowed_providers && !rules.allowed_providers.includes(c.provider)) c.reasons.push(`policy ${name}: provider ${c.provider} not allowed`);
      if (rules.allowed_regions && !rules.allowed_regions.includes(c.region)) c.reasons.push(`policy ${name}: region ${c.region} not allowed`);
      if (rules.residency && (!c.residency || !rules.residency.includes(c.residency))) c.reasons.push(`policy ${name}: data residency ${c.residency ?? 'undeclared'} not in ${rules.residency.join(', ')}`);
      if (rules.max_cost_per_unit !== undefined) {
        const max = toMicros(rules.max_cost_per_unit, ['rules']);
        if (c.cost_micros === null) c.reasons.push(`policy ${name}: no price for provider ${c.provider}, max cost cannot be checked`);
        else if (c.cost_micros > max) c.reasons.push(`policy ${name}: cost ${fromMicros(c.cost_micros)} per unit above ${rules.max_cost_per_unit}`);
      }
    }
  }
}

/** The objective of a workload from its value policy: latency at or above the threshold, else cost. */
export function objectiveOf(v: ValueRules | null): Objective {
  if (!v) return 'balanced';
  return toMicros(v.value_per_unit, ['rules']) >= toMicros(v.latency_above, ['rules']) ? 'latency' : 'cost';
}

/**
 * Scores the eligible candidates (lower is better): each figure divided by the largest among
 * them, weighted by the objective (cost 0.8/0.2, latency 0.2/0.8, balanced 0.5/0.5); fewer
 * free threads add a small penalty. Unknown figures (no price, nothing measured) count as 0.
 */
export function rank(list: Candidate[], objective: Objective): Candidate[] {
  const ok = list.filter((c) => !c.reasons.length);
  const maxCost = Math.max(0, ...ok.map((c) => c.cost_micros ?? 0));
  const maxLat = Math.max(0, ...ok.map((c) => c.latency_p95_ms ?? 0));
  const [wc, wl] = objective === 'cost' ? [0.8, 0.2] : objective === 'latency' ? [0.2, 0.8] : [0.5, 0.5];
  for (const c of ok) {
    const cost = maxCost ? (c.cost_micros ?? 0) / maxCost : 0;
    const lat = maxLat ? (c.latency_p95_ms ?? 0) / maxLat : 0;
    const busy = c.threads ? 1 - c.free_threads / c.threads : 1;
    c.score = Math.round((wc * cost + wl * lat + 0.1 * busy) * 10_000) / 10_000;
  }
  return ok.sort((a, b) => a.score! - b.score! || b.free_threads - a.free_threads || (a.node_id ?? '').localeCompare(b.node_id ?? ''));
}

/** Why a runner-up lost to the choice, in the figures that made the difference. */
export function whyLost(c: Candidate, best: Candidate): string {
  const parts = [`score ${c.score} vs ${best.score}`];
  if (c.latency_p95_ms !== best.latency_p95_ms) parts.push(`p95 ${c.latency_p95_ms ?? 'unmeasured'} ms vs ${best.latency_p95_ms ?? 'unmeasured'} ms`);
  if (c.cost_micros !== best.cost_micros) parts.push(`cost ${c.cost_micros === null ? 'unknown' : fromMicros(c.cost_micros)} vs ${best.cost_micros === null ? 'unknown' : fromMicros(best.cost_micros)}`);
  if (c.free_threads !== best.free_threads) parts.push(`${c.free_threads} vs ${best.free_threads} free threads`);
  return parts.join('; ');
}
