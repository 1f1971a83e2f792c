import { z } from 'zod';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { DAY_MS, windowOf, type Deps } from './deps';
import { fromMicros } from '../../core/money';
import { method, windowQuery } from './schemas';
import { spend } from './costs';

const component = z.object({ name: z.string(), status: z.enum(['ok', 'degraded', 'down']), detail: z.string() });
const allocation = z.object({
  id: z.string(),
  tenant_id: z.string(),
  device_id: z.string(),
  provider: z.string(),
  region: z.string(),
  holder_kind: z.string(),
  holder_id: z.string(),
  workload_type: z.string().nullable(),
  created_at: z.string(),
  released_at: z.string().nullable(),
  model: z.object({ id: z.string(), name: z.string(), version: z.string() }).nullable(),
});

const count = async (q: any) => Number(((await q.count({ n: '*' }).first()) as { n: unknown } | undefined)?.n ?? 0);

export function statusRoutes(route: RouteMaker<Deps>): RouteDef<Deps>[] {
  return [
    route({
      method: 'get',
      path: '/health',
      summary: 'Health of AI operations: the registry store, the compute and llm kernels (mesh health), running training jobs',
      access: 'viewer',
      feature: 'aiops',
      response: z.object({ status: z.enum(['ok', 'degraded', 'down']), components: z.array(component), checked_at: z.string() }),
      handler: async ({ services }) => {
        const components: Array<z.infer<typeof component>> = [];
        try {
          const n = await services.registry.count(null);
          components.push({ name: 'registry', status: 'ok', detail: `${n} models registered` });
        } catch (err) {
          components.push({ name: 'registry', status: 'down', detail: (err as Error).message });
        }
        for (const k of ['compute', 'llm']) {
          const view = services.mesh.kernels().find((x) => x.id === k);
          if (!view) components.push({ name: `kernel:${k}`, status: 'down', detail: 'kernel not loaded' });
          else {
            const active = view.nodes_by_state.active;
            const status = !active || view.breaker.isolated ? 'down' : view.health === 'healthy' || view.health === 'unknown' ? 'ok' : 'degraded';
            components.push({ name: `kernel:${k}`, status, detail: `${active} active nodes, health ${view.health}: ${view.reason}` });
          }
        }
        const running = await count(services.db('aiops_training_jobs').where('state', 'running'));
        components.push({ name: 'training', status: components.find((c) => c.name === 'kernel:compute')!.status, detail: `${running} jobs running` });
        const status: z.infer<typeof component>['status'] = components.some((c) => c.status === 'down') ? (components.every((c) => c.status === 'down') ? 'down' : 'degraded') : components.some((c) => c.status === 'degraded') ? 'degraded' : 'ok';
        return { status, components, checked_at: services.clock.now().toISOString() };
      },
    }),
    route({
      method: 'get',
      path: '/stats',
      summary: "The tenant's AI operations in figures: models, training jobs by state, LLM calls and spend over a window (default 24 h), budgets and alerts",
      access: 'viewer',
      feature: 'aiops',
      query: z.object(windowQuery),
      response: z.object({
        models: z.object({ total: z.number(), by_task: z.record(z.string(), z.number()), by_provider: z.record(z.string(), z.number()) }),
        training_jobs: z.record(z.string(), z.number()),
        llm_calls: z.number(),
        spend: z.array(z.object({ currency: z.string(), amount: z.string() })),
        budgets: z.number(),
        alerts: z.number(),
        ...method,
      }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const t = caller!.tenantId;
        const w = windowOf(query, services.clock, DAY_MS);
        const models = await services.registry.all(t);
        const tally = (xs: string[]) => xs.reduce<Record<string, number>>((a, x) => ((a[x] = (a[x] ?? 0) + 1), a), {});
        const jobs: Array<{ state: string; n: unknown }> = await services.db('aiops_training_jobs').where('tenant_id', t).select('state').count({ n: '*' }).groupBy('state');
        const sp = await spend(services.db, { tenantId: t, ...w }, []);
        const byCur = new Map<string, number>();
        for (const r of sp) byCur.set(r.currency, (byCur.get(r.currency) ?? 0) + r.micros);
        return {
          models: { total: models.length, by_task: tally(models.map((m) => m.task)), by_provider: tally(models.map((m) => m.provider)) },
          training_jobs: Object.fromEntries(jobs.map((j) => [j.state, Number(j.n)])),
          llm_calls: await count(services.db('telemetry_events').where({ tenant_id: t, type: 'llm-call' }).andWhere('ts', '>=', w.since).andWhere('ts', '<', w.until)),
          spend: [...byCur].map(([currency, m]) => ({ currency, amount: fromMicros(m) })),
          budgets: await count(services.db('aiops_budgets').where('tenant_id', t)),
          alerts: await count(services.db('aiops_cost_alerts').where('tenant_id', t).andWhere('created_at', '>=', w.since).andWhere('created_at', '<', w.until)),
          method: 'counts and sums of stored rows',
          window: w,
          inputs: ['model registry', 'training jobs', 'cost records', 'telemetry llm-call events', 'budgets', 'cost alerts'],
        };
      },
    }),
    route({
      method: 'get',
      path: '/gpu/allocations',
      summary: "GPU allocations seen from the model side: the tenant's devices held, with the model or job holding each (the compute inventory's allocations)",
      access: 'viewer',
      feature: 'aiops',
      response: z.object({ allocations: z.array(allocation), devices: z.number(), next_cursor: z.null() }),
      handler: async ({ caller, services }) => {
        const [allocs, devices, models] = await Promise.all([services.compute.allocations(caller!.tenantId), services.compute.gpus(), services.registry.all(caller!.tenantId)]);
        return {
          allocations: allocs.map((a) => {
            const m = models.find((x) => x.id === a.holder_id || x.training_job_id === a.holder_id);
            return { ...a, model: m ? { id: m.id, name: m.name, version: m.version } : null };
          }),
          devices: devices.length,
          next_cursor: null,
        };
      },
    }),
  ];
}
