import crypto from 'node:crypto';
import { z } from 'zod';
import type { Caller } from '../../core/roles';
import { Conflict, invalid } from '../../core/errors';
import { fromMicros, toMicros } from '../../core/money';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { tenantScope } from '../../core/tenancy';
import { HOUR_MS, windowOf, type Deps } from './deps';
import { placementFor, valueFor } from './policies';
import { candidates, check, freeGpus, MEASURE_WINDOW_MS, objectiveOf, rank, whyLost, type Candidate } from './router';
import { parse } from './store';

export const routeBody = z.object({
  workload_type: z.string().min(1).max(64).regex(/^[a-z][a-z0-9_-]*$/),
  requirements: z.object({ gpu_memory: z.number().min(0).max(100_000).optional(), latency_target_ms: z.number().positive().max(3_600_000).optional() }).default({}),
  /** The kernel that runs it, when its type is not one config maps (compute.workloadKernels). */
  kernel: z.string().min(1).max(64).optional(),
});

const candidateOut = z.object({
  provider: z.string(),
  region: z.string(),
  node_id: z.string().nullable(),
  residency: z.string().nullable(),
  free_threads: z.number(),
  threads: z.number(),
  gpu_memory_free_gb: z.number(),
  tasks_measured: z.number(),
  latency_p50_ms: z.number().nullable(),
  latency_p95_ms: z.number().nullable(),
  cost_per_unit: z.string().nullable(),
  currency: z.string().nullable(),
  score: z.number().nullable(),
});
const out = (c: Candidate) => {
  const { cost_micros, reasons: _r, ...rest } = c;
  return { ...rest, cost_per_unit: cost_micros === null ? null : fromMicros(cost_micros) };
};

export const decisionOut = z.object({
  workload_id: z.string(),
  workload_type: z.string(),
  kernel: z.string(),
  objective: z.enum(['cost', 'latency', 'balanced']),
  value_policy: z.string().nullable(),
  policies_applied: z.array(z.string()),
  choice: candidateOut,
  gpu_allocation_id: z.string().nullable(),
  runners_up: z.array(candidateOut.extend({ lost_because: z.string() })),
  rejected: z.array(candidateOut.extend({ reasons: z.array(z.string()) })),
  excluded_providers: z.array(z.object({ provider: z.string(), reason: z.string() })),
  method: z.string(),
  window: z.object({ since: z.string(), until: z.string() }),
  inputs: z.array(z.string()),
});

/** Routes one workload and stores the decision (the ROI and recommendations replay these). */
export async function routeWorkload(services: Deps, caller: Caller, body: z.output<typeof routeBody>): Promise<z.input<typeof decisionOut>> {
  const kernel = body.kernel ?? services.compute.kernelFor(body.workload_type);
  if (!kernel) throw invalid(['body', 'workload_type'], `no kernel runs workload type ${body.workload_type}; give "kernel" or map it in compute.workloadKernels`);
  if (!services.mesh.kernelMap.has(kernel)) throw invalid(['body', 'kernel'], `unknown kernel ${kernel}`);
  const now = services.clock.now();
  const { list, excluded } = await candidates(services.mesh, services.db, services.compute, kernel, now);
  const policies = await placementFor(services.db, caller.tenantId, body.workload_type);
  const value = await valueFor(services.db, caller.tenantId, body.workload_type);
  check(list, body.requirements, policies);
  const objective = objectiveOf(value);
  const ranked = rank(list, objective);
  const rejected = list.filter((c) => c.reasons.length);
  if (!ranked.length) {
    const unmet = [...new Set(rejected.flatMap((c) => c.reasons.map((r) => r.split(':')[0]!)))];
    throw new Conflict(`No place can run this ${body.workload_type} workload: unmet ${unmet.join(', ') || 'capacity (no active node)'}`, 'NO_CANDIDATE', {
      unmet,
      rejected: rejected.map((c) => ({ ...out(c), reasons: c.reasons })),
      excluded_providers: excluded,
    });
  }
  const [best, ...rest] = ranked;
  const id = crypto.randomUUID();
  await services.db('uaicp_workloads').insert({
    id,
    tenant_id: caller.tenantId,
    workload_type: body.workload_type,
    kernel,
    requirements: JSON.stringify(body.requirements),
    objective,
    provider: best!.provider,
    region: best!.region,
    node_id: best!.node_id,
    latency_p95_ms: best!.latency_p95_ms,
    cost_micros: best!.cost_micros,
    currency: best!.currency,
    candidates: JSON.stringify(ranked),
    created_at: now.toISOString(),
  });
  // A workload that needs GPU memory holds the device with the most free memory until released.
  let allocation: string | null = null;
  if (body.requirements.gpu_memory) {
    const gpu = (await freeGpus(services.compute, best!.provider))[0]!;
    allocation = (await services.compute.allocate({ tenant_id: caller.tenantId, device_id: gpu.device.id, provider: best!.provider, region: best!.region, holder_kind: 'workload', holder_id: id, workload_type: body.workload_type })).id;
  }
  await services.actions.record({ source: 'manual', actor: caller.id, action: 'route_workload', target_type: 'workload', target_id: id, result: 'succeeded', tenant_id: caller.tenantId, detail: { workload_type: body.workload_type, provider: best!.provider, region: best!.region, node_id: best!.node_id, allocation } });
  return {
    workload_id: id,
    workload_type: body.workload_type,
    kernel,
    objective,
    value_policy: value?.name ?? null,
    policies_applied: policies.map((p) => p.name),
    choice: out(best!),
    gpu_allocation_id: allocation,
    runners_up: rest.map((c) => ({ ...out(c), lost_because: whyLost(c, best!) })),
    rejected: rejected.map((c) => ({ ...out(c), reasons: c.reasons })),
    excluded_providers: excluded,
    method: `weighted score of cost and p95 latency for objective ${objective}, after requirements and placement policies`,
    window: { since: new Date(now.getTime() - MEASURE_WINDOW_MS).toISOString(), until: now.toISOString() },
    inputs: ['mesh nodes (state, threads, in-flight)', 'task outcomes per node', 'provider price table', 'GPU inventory', 'placement and value policies'],
  };
}

const windowQuery = { since: z.iso.datetime({ offset: true }).optional(), until: z.iso.datetime({ offset: true }).optional() };

interface Routed {
  workload_type: string;
  cost_micros: number | null;
  currency: string | null;
  latency_p95_ms: number | null;
  candidates: Candidate[];
  created_at: string;
}

async function routedIn(services: Deps, tenantId: string, w: { since: string; until: string }): Promise<Routed[]> {
  const rows = await services.db('uaicp_workloads').where('tenant_id', tenantId).andWhere('created_at', '>=', w.since).andWhere('created_at', '<', w.until).orderBy('created_at').limit(50_000);
  return rows.map((r: Record<string, any>) => ({ workload_type: r.workload_type, cost_micros: r.cost_micros === null ? null : Number(r.cost_micros), currency: r.currency ?? null, latency_p95_ms: r.latency_p95_ms ?? null, candidates: parse(r.candidates), created_at: r.created_at }));
}

/** Value (from value policies) against measured cost of the routed workloads, per type. */
async function roiOf(services: Deps, tenantId: string, w: { since: string; until: string }) {
  const routed = await routedIn(services, tenantId, w);
  const types = [...new Set(routed.map((r) => r.workload_type))].sort();
  const rows = [];
  for (const t of types) {
    const of = routed.filter((r) => r.workload_type === t);
    const v = await valueFor(services.db, tenantId, t);
    const priced = of.filter((r) => r.cost_micros !== null);
    const cost = priced.reduce((a, r) => a + r.cost_micros!, 0);
    const valueMicros = v ? toMicros(v.value_per_unit, ['value_per_unit']) * of.length : null;
    rows.push({
      workload_type: t,
      workloads: of.length,
      priced_workloads: priced.length,
      value: valueMicros === null ? null : fromMicros(valueMicros),
      cost: fromMicros(cost),
      currency: v?.currency ?? priced[0]?.currency ?? null,
      roi: valueMicros === null || cost === 0 ? null : Math.round(((valueMicros - cost) / cost) * 10_000) / 10_000,
      value_policy: v?.name ?? null,
    });
  }
  return { routed, rows };
}

const roiRow = z.object({ workload_type: z.string(), workloads: z.number(), priced_workloads: z.number(), value: z.string().nullable(), cost: z.string(), currency: z.string().nullable(), roi: z.number().nullable(), value_policy: z.string().nullable() });
const method = { method: z.string(), window: z.object({ since: z.string(), until: z.string() }), inputs: z.array(z.string()) };
const ROI_METHOD = 'value = routed workloads × the value policy’s value per unit; cost = sum of each routed workload’s unit cost at its place (provider price × median task time); roi = (value − cost) / cost';

export function routingRoutes(route: RouteMaker<Deps>): RouteDef<Deps>[] {
  return [
    route({
      method: 'post',
      path: '/workloads/route',
      summary: 'Place a workload: every region/node that meets the requirements and placement policies, scored from measured state; the choice, the runners-up and why each lost',
      description: 'gpu_memory is in GB; latency_target_ms is compared with the p95 of the node’s tasks in the last 15 minutes. 409 NO_CANDIDATE names the unmet requirements.',
      access: 'member',
      feature: 'aiops',
      body: routeBody,
      response: decisionOut,
      errors: [409, 422],
      handler: ({ body, caller, services }) => routeWorkload(services, caller!, body),
    }),
    route({
      method: 'post',
      path: '/workloads/{workload_id}/release',
      summary: 'Release the GPU a routed workload holds (beyond the spec); 409 when it holds none',
      access: 'member',
      feature: 'aiops',
      params: z.object({ workload_id: z.uuid() }),
      response: z.object({ workload_id: z.string(), released: z.number() }),
      errors: [404, 409, 422],
      handler: async ({ params, caller, services }) => {
        await tenantScope(services.db, caller!).get('uaicp_workloads', { id: params.workload_id }, 'Workload');
        const released = await services.compute.release(caller!.tenantId, params.workload_id);
        if (!released) throw new Conflict(`Workload ${params.workload_id} holds no device`, 'NOTHING_HELD');
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'release_workload_gpu', target_type: 'workload', target_id: params.workload_id, result: 'succeeded', tenant_id: caller!.tenantId, detail: { released } });
        return { workload_id: params.workload_id, released };
      },
    }),
    route({
      method: 'get',
      path: '/roi',
      summary: 'Return on the routed workloads of a window (default 24 h): value per the value policies against measured cost, per workload type',
      access: 'viewer',
      feature: 'aiops',
      query: z.object(windowQuery),
      response: z.object({ workload_types: z.array(roiRow), ...method }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const w = windowOf(query, services.clock, 24 * HOUR_MS);
        const { rows } = await roiOf(services, caller!.tenantId, w);
        return { workload_types: rows, method: ROI_METHOD, window: w, inputs: ['routed workloads', 'value policies', 'provider price tables'] };
      },
    }),
    route({
      method: 'get',
      path: '/roi/dashboard',
      summary: 'ROI dashboard: totals, per workload type, and per day over a window (default 7 days)',
      access: 'viewer',
      feature: 'aiops',
      query: z.object(windowQuery),
      response: z.object({
        totals: z.object({ workloads: z.number(), value: z.record(z.string(), z.string()), cost: z.record(z.string(), z.string()) }),
        workload_types: z.array(roiRow),
        days: z.array(z.object({ day: z.string(), workloads: z.number(), cost: z.string() })),
        ...method,
      }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const w = windowOf(query, services.clock, 7 * 24 * HOUR_MS);
        const { routed, rows } = await roiOf(services, caller!.tenantId, w);
        const sumBy = (pick: (r: (typeof rows)[number]) => string | null) => {
          const m = new Map<string, number>();
          for (const r of rows) if (pick(r) !== null && r.currency) m.set(r.currency, (m.get(r.currency) ?? 0) + toMicros(pick(r)!, ['amount']));
          return Object.fromEntries([...m].map(([c, v]) => [c, fromMicros(v)]));
        };
        const days = new Map<string, { workloads: number; cost: number }>();
        for (const r of routed) {
          const d = days.get(r.created_at.slice(0, 10)) ?? { workloads: 0, cost: 0 };
          d.workloads++;
          d.cost += r.cost_micros ?? 0;
          days.set(r.created_at.slice(0, 10), d);
        }
        return {
          totals: { workloads: routed.length, value: sumBy((r) => r.value), cost: sumBy((r) => r.cost) },
          workload_types: rows,
          days: [...days].map(([day, d]) => ({ day, workloads: d.workloads, cost: fromMicros(d.cost) })),
          method: ROI_METHOD,
          window: w,
          inputs: ['routed workloads', 'value policies', 'provider price tables'],
        };
      },
    }),
    route({
      method: 'get',
      path: '/routing/recommendations',
      summary: 'Changes that would have lowered cost or latency over a window (default 24 h), from replaying each routed workload under the other eligible places it had',
      access: 'viewer',
      feature: 'aiops',
      query: z.object(windowQuery),
      response: z.object({
        recommendations: z.array(z.object({ workload_type: z.string(), goal: z.enum(['cost', 'latency']), prefer: z.object({ provider: z.string(), region: z.string(), node_id: z.string().nullable() }), workloads_affected: z.number(), cost_saving: z.string().nullable(), latency_saving_ms: z.number().nullable() })),
        workloads_replayed: z.number(),
        ...method,
      }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const w = windowOf(query, services.clock, 24 * HOUR_MS);
        const routed = await routedIn(services, caller!.tenantId, w);
        const acc = new Map<string, { workload_type: string; goal: 'cost' | 'latency'; prefer: { provider: string; region: string; node_id: string | null }; workloads_affected: number; saving: number }>();
        const add = (r: Routed, goal: 'cost' | 'latency', alt: Candidate, saving: number) => {
          const key = JSON.stringify([r.workload_type, goal, alt.provider, alt.region, alt.node_id]);
          const a = acc.get(key) ?? { workload_type: r.workload_type, goal, prefer: { provider: alt.provider, region: alt.region, node_id: alt.node_id }, workloads_affected: 0, saving: 0 };
          a.workloads_affected++;
          a.saving += saving;
          acc.set(key, a);
        };
        for (const r of routed) {
          // The stored candidates met the requirements and policies when the workload was routed; the first is the choice.
          const [chosen, ...alts] = r.candidates;
          if (!chosen) continue;
          const cheaper = alts.filter((c) => c.cost_micros !== null && chosen.cost_micros !== null && c.cost_micros < chosen.cost_micros).sort((a, b) => a.cost_micros! - b.cost_micros!)[0];
          if (cheaper) add(r, 'cost', cheaper, chosen.cost_micros! - cheaper.cost_micros!);
          const faster = alts.filter((c) => c.latency_p95_ms !== null && chosen.latency_p95_ms !== null && c.latency_p95_ms < chosen.latency_p95_ms).sort((a, b) => a.latency_p95_ms! - b.latency_p95_ms!)[0];
          if (faster) add(r, 'latency', faster, chosen.latency_p95_ms! - faster.latency_p95_ms!);
        }
        const recommendations = [...acc.values()]
          .sort((a, b) => b.workloads_affected - a.workloads_affected)
          .map((a) => ({ workload_type: a.workload_type, goal: a.goal, prefer: a.prefer, workloads_affected: a.workloads_affected, cost_saving: a.goal === 'cost' ? fromMicros(a.saving) : null, latency_saving_ms: a.goal === 'latency' ? Math.round(a.saving * 1000) / 1000 : null }));
        return { recommendations, workloads_replayed: routed.length, method: 'replay of each routed workload against the cheapest and the fastest other eligible candidate measured when it was routed', window: w, inputs: ['routed workloads and their measured candidates'] };
      },
    }),
  ];
}
