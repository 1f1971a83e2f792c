import { z } from 'zod';
import { outcomeCounts, outcomePercentiles } from '../../core/mesh/outcomes';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { HOUR_MS, type Deps } from './deps';

const count = async (q: any) => Number(((await q.count({ n: '*' }).first()) as { n: unknown } | undefined)?.n ?? 0);
const r4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** Capacity and load of the local mesh (every kernel's active nodes). */
function meshLoad(services: Deps) {
  const kernels = services.mesh.kernels();
  const nodes = kernels.flatMap((k) => k.nodes);
  const active = nodes.filter((n) => n.state === 'active');
  const threads = active.reduce((a, n) => a + n.threads, 0);
  const inFlight = nodes.reduce((a, n) => a + n.in_flight, 0);
  const queued = nodes.reduce((a, n) => a + n.queued, 0);
  return { kernels, nodes, active, threads, inFlight, queued, load: threads ? r4(inFlight / threads) : null };
}

const sloRow = z.object({ kernel: z.string(), objective: z.object({ availability: z.number(), latency_p99_ms: z.number(), window_seconds: z.number() }), tasks: z.number(), failed: z.number(), success_ratio: z.number().nullable(), latency_p99_ms: z.number().nullable(), status: z.enum(['met', 'breached', 'no_data']) });

export function viewRoutes(route: RouteMaker<Deps>): RouteDef<Deps>[] {
  return [
    route({
      method: 'get',
      path: '/overview',
      summary: 'Every component of the control plane in counts: providers, regions, nodes, GPUs, models, policies, routed workloads (24 h), jobs, reservations',
      access: 'viewer',
      feature: 'aiops',
      response: z.object({
        providers: z.object({ total: z.number(), available: z.number() }),
        regions: z.number(),
        kernels: z.number(),
        nodes: z.object({ total: z.number(), active: z.number(), threads: z.number() }),
        gpus: z.number(),
        models: z.number(),
        policies: z.object({ placement: z.number(), value: z.number() }),
        workloads_routed_24h: z.number(),
        jobs: z.record(z.string(), z.number()),
        reservations_active: z.number(),
        generated_at: z.string(),
      }),
      handler: async ({ caller, services }) => {
        const t = caller!.tenantId;
        const providers = services.compute.providers();
        const m = meshLoad(services);
        const since = new Date(services.clock.now().getTime() - 24 * HOUR_MS).toISOString();
        const jobs: Array<{ kind: string; n: unknown }> = await services.db('uaicp_jobs').where('tenant_id', t).select('kind').count({ n: '*' }).groupBy('kind');
        return {
          providers: { total: providers.length, available: providers.filter((p) => p.status === 'available').length },
          regions: providers.reduce((a, p) => a + p.regions.length, 0),
          kernels: m.kernels.length,
          nodes: { total: m.nodes.length, active: m.active.length, threads: m.threads },
          gpus: (await services.compute.gpus()).length,
          models: await services.registry.count(t),
          policies: { placement: await count(services.db('uaicp_policies').where({ tenant_id: t, kind: 'placement' })), value: await count(services.db('uaicp_policies').where({ tenant_id: t, kind: 'value' })) },
          workloads_routed_24h: await count(services.db('uaicp_workloads').where('tenant_id', t).andWhere('created_at', '>=', since)),
          jobs: Object.fromEntries(jobs.map((j) => [j.kind, Number(j.n)])),
          reservations_active: await count(services.db('uaicp_reservations').where({ tenant_id: t, state: 'active' })),
          generated_at: services.clock.now().toISOString(),
        };
      },
    }),
    route({
      method: 'get',
      path: '/planetary-overview',
      summary: 'Every provider and region with its capacity (nodes, threads, GPUs), load and the workloads routed there in the last 24 h',
      access: 'viewer',
      feature: 'aiops',
      response: z.object({
        providers: z.array(z.object({
          id: z.string(),
          kind: z.string(),
          status: z.string(),
          regions: z.array(z.object({ id: z.string(), location: z.string().nullable(), residency: z.string().nullable(), nodes: z.number().nullable(), threads: z.number().nullable(), in_flight: z.number().nullable(), load: z.number().nullable(), gpus: z.number().nullable(), workloads_routed_24h: z.number() })),
        })),
        generated_at: z.string(),
      }),
      handler: async ({ caller, services }) => {
        const m = meshLoad(services);
        const gpus = (await services.compute.gpus()).length;
        const since = new Date(services.clock.now().getTime() - 24 * HOUR_MS).toISOString();
        const routed: Array<{ provider: string; region: string; n: unknown }> = await services.db('uaicp_workloads').where('tenant_id', caller!.tenantId).andWhere('created_at', '>=', since).select('provider', 'region').count({ n: '*' }).groupBy('provider', 'region');
        const routedTo = (p: string, r: string) => Number(routed.find((x) => x.provider === p && x.region === r)?.n ?? 0);
        return {
          providers: services.compute.providers().map((p) => ({
            id: p.id,
            kind: p.kind,
            status: p.status,
            // Outside providers: nothing is measured there (no API client), so their figures are null.
            regions: p.regions.map((r) => (p.kind === 'local'
              ? { id: r.id, location: r.location, residency: r.residency, nodes: m.nodes.length, threads: m.threads, in_flight: m.inFlight, load: m.load, gpus, workloads_routed_24h: routedTo(p.id, r.id) }
              : { id: r.id, location: r.location, residency: r.residency, nodes: null, threads: null, in_flight: null, load: null, gpus: null, workloads_routed_24h: routedTo(p.id, r.id) })),
          })),
          generated_at: services.clock.now().toISOString(),
        };
      },
    }),
    route({
      method: 'get',
      path: '/global-health',
      summary: 'Health per provider and region: capacity, load, kernel health from the mesh and a live probe (ping) of each kernel',
      access: 'viewer',
      feature: 'aiops',
      response: z.object({
        status: z.enum(['healthy', 'degraded', 'unhealthy', 'unknown']),
        regions: z.array(z.object({
          provider: z.string(),
          region: z.string(),
          status: z.enum(['healthy', 'degraded', 'unhealthy', 'unknown', 'not_configured']),
          capacity_threads: z.number().nullable(),
          load: z.number().nullable(),
          queued: z.number().nullable(),
          kernels: z.array(z.object({ kernel: z.string(), health: z.string(), reason: z.string(), probe_ok: z.boolean(), probe_ms: z.number().nullable() })),
        })),
        checked_at: z.string(),
      }),
      handler: async ({ services }) => {
        const m = meshLoad(services);
        const probes = await Promise.all(m.kernels.map(async (k) => {
          const p = await services.mesh.ping(k.id, 2000).catch(() => ({ ok: false, latency_ms: null }));
          return { kernel: k.id, health: k.health, reason: k.reason, probe_ok: p.ok, probe_ms: p.latency_ms };
        }));
        const order = ['unknown', 'healthy', 'degraded', 'unhealthy'] as const;
        let local: (typeof order)[number] = probes.length ? 'healthy' : 'unknown';
        for (const p of probes) {
          const h = !p.probe_ok ? 'unhealthy' : (p.health as (typeof order)[number]);
          if (order.indexOf(h) > order.indexOf(local)) local = h;
        }
        const regions = services.compute.providers().flatMap((p) => p.regions.map((r) => (p.kind === 'local'
          ? { provider: p.id, region: r.id, status: local, capacity_threads: m.threads, load: m.load, queued: m.queued, kernels: probes }
          : { provider: p.id, region: r.id, status: p.status === 'not_configured' ? ('not_configured' as const) : ('unknown' as const), capacity_threads: null, load: null, queued: null, kernels: [] })));
        return { status: local, regions, checked_at: services.clock.now().toISOString() };
      },
    }),
    route({
      method: 'get',
      path: '/slo/global',
      summary: "Every region's SLOs rolled up: each kernel's availability and p99 latency over its objective's window, from task outcomes",
      access: 'viewer',
      feature: 'aiops',
      response: z.object({ status: z.enum(['met', 'breached', 'no_data']), regions: z.array(z.object({ provider: z.string(), region: z.string(), status: z.enum(['met', 'breached', 'no_data']), tasks: z.number(), failed: z.number(), success_ratio: z.number().nullable(), kernels: z.array(sloRow) })), method: z.string() }),
      handler: async ({ services }) => {
        await services.mesh.outcomesWriter.flush();
        const now = services.clock.now().getTime();
        const rows: Array<z.infer<typeof sloRow>> = [];
        for (const k of services.mesh.kernels()) {
          const o = services.config.slo.domains[k.id] ?? services.config.slo.default;
          const f = { kernelId: k.id, since: new Date(now - o.windowSeconds * 1000).toISOString() };
          const { tasks, failed } = await outcomeCounts(services.db, f);
          const p99 = (await outcomePercentiles(services.db, f, 'duration_ms', [99], tasks))?.[0] ?? null;
          const ratio = tasks ? r4((tasks - failed) / tasks) : null;
          const status = ratio === null ? 'no_data' : ratio >= o.availability && p99! <= o.latencyP99Ms ? 'met' : 'breached';
          rows.push({ kernel: k.id, objective: { availability: o.availability, latency_p99_ms: o.latencyP99Ms, window_seconds: o.windowSeconds }, tasks, failed, success_ratio: ratio, latency_p99_ms: p99 === null ? null : Math.round(p99 * 1000) / 1000, status });
        }
        const roll = (xs: typeof rows) => (xs.some((x) => x.status === 'breached') ? 'breached' : xs.some((x) => x.status === 'met') ? 'met' : 'no_data') as 'met' | 'breached' | 'no_data';
        const tasks = rows.reduce((a, r) => a + r.tasks, 0);
        const failed = rows.reduce((a, r) => a + r.failed, 0);
        const regions = services.compute.providers().filter((p) => p.kind === 'local').flatMap((p) => p.regions.map((r) => ({ provider: p.id, region: r.id, status: roll(rows), tasks, failed, success_ratio: tasks ? r4((tasks - failed) / tasks) : null, kernels: rows })));
        return { status: roll(rows), regions, method: 'per kernel: success ratio and nearest-rank p99 of task outcomes over the objective window (config slo); a region is breached when any kernel is, met when any is met and none breached' };
      },
    }),
  ];
}
