import crypto from 'node:crypto';
import { z } from 'zod';
import { Conflict, invalid, StateConflict } from '../../core/errors';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import type { Caller } from '../../core/roles';
import { tenantScope } from '../../core/tenancy';
import { HOUR_MS, type Deps } from './deps';
import { idempotencyKey } from '../../core/window';
import { parse } from './store';

const settings = {
  window_hours: z.coerce.number().int().min(1).max(720).default(24),
  bucket_minutes: z.coerce.number().int().min(1).max(1440).default(60),
  horizon: z.coerce.number().int().min(1).max(48).default(6),
};
type Settings = { window_hours: number; bucket_minutes: number; horizon: number };

const prediction = z.object({
  kernel: z.string(),
  capacity_threads: z.number(),
  history_buckets: z.number(),
  tasks: z.number(),
  busy_ms: z.array(z.number()),
  forecast: z.array(z.object({ at: z.string(), busy_ms: z.number(), utilisation: z.number().nullable() })).nullable(),
  peak_utilisation: z.number().nullable(),
  error: z.object({ rmse_busy_ms: z.number(), method: z.string() }).nullable(),
  reason: z.string().nullable(),
});
type Prediction = z.infer<typeof prediction>;

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * Load of a kernel's threads per bucket (the sum of its tasks' durations: thread-ms used) from
 * the task outcomes of the window, from the first bucket with a task on; forecast with Holt's
 * linear trend on the analytics kernel. Utilisation = busy ms / (active threads × bucket ms).
 */
async function predict(services: Deps, kernel: string, s: Settings, caller: Caller): Promise<Prediction> {
  const now = services.clock.now().getTime();
  const bucketMs = s.bucket_minutes * 60_000;
  const start = now - s.window_hours * HOUR_MS;
  await services.mesh.outcomesWriter.flush();
  // Grouped by minute in the database (substr of the ISO time), so a long window never loads its rows.
  const rows: Array<{ minute: string; busy: unknown; n: unknown }> = await services.db('task_outcomes')
    .where('kernel_id', kernel)
    .andWhere('at', '>=', new Date(start).toISOString())
    .select(services.db.raw('substr(at, 1, 16) as minute'), services.db.raw('sum(duration_ms) as busy'), services.db.raw('count(*) as n'))
    .groupByRaw('substr(at, 1, 16)');
  const nb = Math.ceil((now - start) / bucketMs);
  const busy = new Array<number>(nb).fill(0);
  let tasks = 0;
  let first = nb;
  for (const r of rows) {
    const i = Math.min(nb - 1, Math.max(0, Math.floor((Date.parse(`${r.minute}:00Z`) - start) / bucketMs)));
    busy[i]! += Number(r.busy);
    tasks += Number(r.n);
    first = Math.min(first, i);
  }
  const series = busy.slice(first).map(r3);
  const view = services.mesh.kernels().find((k) => k.id === kernel);
  const threads = (view?.nodes ?? []).filter((n) => n.state === 'active').reduce((a, n) => a + n.threads, 0);
  const base = { kernel, capacity_threads: threads, history_buckets: series.length, tasks, busy_ms: series };
  if (series.length < 3) return { ...base, forecast: null, peak_utilisation: null, error: null, reason: `${series.length} buckets of ${s.bucket_minutes} min with history; a forecast needs 3` };
  const f = (await services.mesh.run('analytics', 'forecast', { series, horizon: s.horizon }, { caller })) as { forecast: number[]; sse: number };
  const cap = threads * bucketMs;
  const forecast = f.forecast.map((v, i) => {
    const b = Math.max(0, v);
    return { at: new Date(start + (nb + i) * bucketMs).toISOString(), busy_ms: r3(b), utilisation: cap ? r3(b / cap) : null };
  });
  const peak = cap ? Math.max(...forecast.map((x) => x.utilisation!)) : null;
  return { ...base, forecast, peak_utilisation: peak, error: { rmse_busy_ms: r3(Math.sqrt(f.sse / (series.length - 1))), method: 'one-step-ahead in-sample errors of the fit' }, reason: null };
}

const reservation = z.object({
  id: z.string().nullable(),
  kernel: z.string(),
  state: z.enum(['active', 'released', 'not_needed', 'dry_run']),
  current_threads: z.number(),
  needed_threads: z.number(),
  nodes_added: z.array(z.string()),
  refused: z.string().nullable(),
  prediction,
});

const reservationParams = z.object({ reservation_id: z.uuid() });

/** Drains, completes and removes nodes; a node still busy (or gone) stays as the mesh has it, and the answer says so. */
async function removeNodes(services: Deps, ids: string[], actor: { source: 'manual'; actor: string; cause: string }) {
  const nodes = [];
  for (const id of ids) {
    try {
      await services.mesh.drainNode(id, { deadline_seconds: 60 }, actor);
      await services.mesh.completeDrain(id, {}, actor);
      await services.mesh.removeNode(id, actor);
      nodes.push({ node_id: id, removed: true, detail: null });
    } catch (err) {
      nodes.push({ node_id: id, removed: false, detail: (err as Error).message });
    }
  }
  return nodes;
}

export function forecastRoutes(route: RouteMaker<Deps>): RouteDef<Deps>[] {
  return [
    route({
      method: 'get',
      path: '/resources/predictions',
      summary: "Forecast of each kernel's thread load per bucket from its task-outcome history (Holt linear trend), with the fit's error",
      access: 'viewer',
      feature: 'aiops',
      query: z.object({ ...settings, kernel: z.string().max(64).optional() }),
      response: z.object({ resources: z.array(prediction), method: z.string(), window: z.object({ since: z.string(), until: z.string() }), inputs: z.array(z.string()) }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const kernels = services.mesh.kernels().map((k) => k.id).filter((k) => !query.kernel || k === query.kernel);
        if (query.kernel && !kernels.length) throw invalid(['query', 'kernel'], `unknown kernel ${query.kernel}`);
        const resources = [];
        for (const k of kernels) resources.push(await predict(services, k, query, caller!));
        const until = services.clock.now();
        return {
          resources,
          method: `busy thread-ms per ${query.bucket_minutes}-minute bucket from task outcomes; Holt linear trend (alpha 0.5, beta 0.1) on the analytics kernel; utilisation against the active threads now`,
          window: { since: new Date(until.getTime() - query.window_hours * HOUR_MS).toISOString(), until: until.toISOString() },
          inputs: ['task outcomes', 'mesh nodes'],
        };
      },
    }),
    route({
      method: 'post',
      path: '/resources/prefetch',
      summary: "Reserve capacity ahead of a forecast peak: adds nodes to a kernel on the mesh (within max_new_nodes and the mesh's limits) so that the peak stays under target_utilisation",
      description: 'Recorded as a reservation (and in the action log); reversible with POST /uaicp/resources/prefetch/{reservation_id}/release. 409 INSUFFICIENT_HISTORY without three buckets of history. With an Idempotency-Key header a retry gets the first answer and adds nothing.',
      access: 'operator',
      feature: 'aiops',
      body: z.object({ kernel: z.string().min(1).max(64), target_utilisation: z.number().gt(0).max(1).default(0.7), max_new_nodes: z.number().int().min(1).max(8).default(2), dry_run: z.boolean().default(false), ...settings }),
      response: reservation,
      errors: [409, 422],
      handler: async ({ body, caller, services, req }) => {
        const key = idempotencyKey(req.headers);
        const prior = key ? await services.db('uaicp_reservations').where({ tenant_id: caller!.tenantId, idempotency_key: key }).first() : undefined;
        if (prior) return parse(prior.answer);
        if (!services.mesh.kernelMap.has(body.kernel)) throw invalid(['body', 'kernel'], `unknown kernel ${body.kernel}`);
        const p = await predict(services, body.kernel, body, caller!);
        if (!p.forecast) throw new Conflict(`No forecast for kernel ${body.kernel}: ${p.reason}`, 'INSUFFICIENT_HISTORY');
        const bucketMs = body.bucket_minutes * 60_000;
        const peakBusy = Math.max(...p.forecast.map((x) => x.busy_ms));
        const needed = Math.ceil(peakBusy / (bucketMs * body.target_utilisation));
        const perNode = services.mesh.kernelOf(body.kernel).nodes[0]?.threads ?? 1;
        const wanted = Math.min(body.max_new_nodes, Math.max(0, Math.ceil((needed - p.capacity_threads) / perNode)));
        const base = { kernel: body.kernel, current_threads: p.capacity_threads, needed_threads: needed, prediction: p };
        if (!wanted || body.dry_run) return { id: null, state: wanted ? ('dry_run' as const) : ('not_needed' as const), nodes_added: [], refused: null, ...base };
        const added: string[] = [];
        let refused: string | null = null;
        for (let i = 0; i < wanted; i++) {
          try {
            added.push((await services.mesh.addNode(body.kernel, { source: 'manual', actor: caller!.id, cause: `prefetch for forecast peak ${p.peak_utilisation} utilisation` })).id);
          } catch (err) {
            refused = (err as Error).message;
            break;
          }
        }
        const id = crypto.randomUUID();
        const answer = { id, state: 'active' as const, nodes_added: added, refused, ...base };
        try {
          await tenantScope(services.db, caller!).insert('uaicp_reservations', { id, kernel: body.kernel, state: 'active', nodes: JSON.stringify(added), answer: JSON.stringify(answer), idempotency_key: key ?? null, created_by: caller!.id, created_at: services.clock.now().toISOString(), released_at: null });
        } catch (err) {
          // A retry with the same key that ran at the same moment: keep the first, take back these nodes.
          const first = key ? await services.db('uaicp_reservations').where({ tenant_id: caller!.tenantId, idempotency_key: key }).first() : undefined;
          if (!first) throw err;
          await removeNodes(services, added, { source: 'manual', actor: caller!.id, cause: `duplicate prefetch ${key}` });
          return parse(first.answer);
        }
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'prefetch_capacity', target_type: 'kernel', target_id: body.kernel, result: added.length ? 'succeeded' : 'refused', tenant_id: caller!.tenantId, detail: { reservation_id: id, nodes: added, needed_threads: needed, refused } });
        return answer;
      },
    }),
    route({
      method: 'post',
      path: '/resources/prefetch/{reservation_id}/release',
      summary: 'Release a reservation (beyond the spec): its nodes are drained and removed from the mesh',
      access: 'operator',
      feature: 'aiops',
      params: reservationParams,
      response: z.object({ id: z.string(), kernel: z.string(), state: z.literal('released'), nodes: z.array(z.object({ node_id: z.string(), removed: z.boolean(), detail: z.string().nullable() })) }),
      errors: [404, 409, 422],
      handler: async ({ params, caller, services }) => {
        const scope = tenantScope(services.db, caller!);
        const r = await scope.get<Record<string, any>>('uaicp_reservations', { id: params.reservation_id }, 'Reservation');
        if (r.state !== 'active') throw new StateConflict(r.state, [], `Reservation ${r.id} is already ${r.state}`);
        const actor = { source: 'manual' as const, actor: caller!.id, cause: `release of reservation ${r.id}` };
        const nodes = await removeNodes(services, parse(r.nodes) as string[], actor);
        await scope.update('uaicp_reservations', { id: r.id }, { state: 'released', released_at: services.clock.now().toISOString() }, 'Reservation');
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'release_capacity', target_type: 'kernel', target_id: r.kernel, result: 'succeeded', tenant_id: caller!.tenantId, detail: { reservation_id: r.id, nodes } });
        return { id: r.id, kernel: r.kernel, state: 'released' as const, nodes };
      },
    }),
  ];
}
