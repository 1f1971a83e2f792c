import { z } from 'zod';
import { Conflict } from '../../core/errors';
import { pageAtOffset } from '../../core/pagination';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { DAY_MS, windowOf, type Deps } from './deps';
import { choose, evidenceOf } from './evidence';
import { evidence, method, model, modelBody, page, priceBody, routeBody, windowQuery } from './schemas';

const modelParams = z.object({ model_id: z.uuid() });

export function modelRoutes(route: RouteMaker<Deps>): RouteDef<Deps>[] {
  return [
    route({
      method: 'post',
      path: '/models',
      summary: 'Register a model version (name, version, provider, task, endpoint or kernel, price per million tokens)',
      description: 'Without a version the next whole number is given. 409 MODEL_VERSION_EXISTS for a name and version the tenant has.',
      access: 'member',
      feature: 'aiops',
      body: modelBody,
      response: model,
      status: 201,
      errors: [409, 422],
      handler: async ({ body, caller, services }) => {
        const m = await services.registry.register(caller!.tenantId, caller!.id, body as Parameters<Deps['registry']['register']>[2]);
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'register_model', target_type: 'model', target_id: m.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: { name: m.name, version: m.version } });
        return m;
      },
    }),
    route({
      method: 'get',
      path: '/models',
      summary: "The tenant's registered models, newest first; filter by task, provider or name",
      access: 'viewer',
      feature: 'aiops',
      query: z.object({ task: z.string().max(64).optional(), provider: z.string().max(64).optional(), name: z.string().max(128).optional(), ...page }),
      response: z.object({ models: z.array(model), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const all = await services.registry.all(caller!.tenantId, query);
        // The registry is small (bounded to 1000 a tenant); the cursor holds the offset.
        const page = pageAtOffset(all, query.limit, query.cursor);
        return { models: page.items, next_cursor: page.next_cursor };
      },
    }),
    route({
      method: 'get',
      path: '/models/{model_id}',
      summary: 'One registered model',
      access: 'viewer',
      feature: 'aiops',
      params: modelParams,
      response: model,
      errors: [404, 422],
      handler: ({ params, caller, services }) => services.registry.get(caller!.tenantId, params.model_id),
    }),
    route({
      method: 'put',
      path: '/models/{model_id}/price',
      summary: "Update a model's prices per million tokens (beyond the spec: prices are registry data)",
      access: 'operator',
      feature: 'aiops',
      params: modelParams,
      body: priceBody,
      response: model,
      errors: [404, 422],
      handler: async ({ params, body, caller, services }) => {
        const m = await services.registry.setPrice(caller!.tenantId, params.model_id, body as never);
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'set_model_price', target_type: 'model', target_id: m.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: { price: m.price } });
        return m;
      },
    }),
    route({
      method: 'get',
      path: '/models/{model_id}/metrics',
      summary: "A model's measured figures over a window (default 24 h) from llm-call and evaluation telemetry",
      description: 'Matched on the model name (the llm-call response or request model, the evaluation model). Costs: what telemetry reported, and the tokens at the registry price.',
      access: 'viewer',
      feature: 'aiops',
      params: modelParams,
      query: z.object(windowQuery),
      response: evidence.extend(method),
      errors: [404, 422],
      handler: async ({ params, query, caller, services }) => {
        const m = await services.registry.get(caller!.tenantId, params.model_id);
        const w = windowOf(query, services.clock, DAY_MS);
        const [e] = await evidenceOf(services.telemetryStore, caller!.tenantId, [m], w);
        return { ...e!, method: 'aggregates of stored telemetry events; latency percentiles by nearest rank', window: w, inputs: ['telemetry llm-call events', 'telemetry evaluation events', 'registry price'] };
      },
    }),
    route({
      method: 'post',
      path: '/routing/route',
      summary: "Pick a registered model for a request from each model's measured latency, cost and evaluation scores",
      description: 'Models of the task whose measurements meet max_latency_ms (p95), max_cost_usd (per call) and min_quality (mean evaluation score) are ordered by `prefer`; 409 NO_ELIGIBLE_MODEL names why each was refused.',
      access: 'member',
      feature: 'aiops',
      body: routeBody,
      response: z.object({
        model: model,
        evidence,
        quality: z.number().nullable(),
        runners_up: z.array(z.object({ model_id: z.string(), name: z.string(), version: z.string(), evidence, quality: z.number().nullable() })),
        refused: z.array(z.object({ model_id: z.string(), name: z.string(), version: z.string(), reasons: z.array(z.string()) })),
        ...method,
      }),
      errors: [409, 422],
      handler: async ({ body, caller, services }) => {
        const models = await services.registry.all(caller!.tenantId, { task: body.task });
        const until = services.clock.now();
        const w = { since: new Date(until.getTime() - body.window_hours * 3_600_000).toISOString(), until: until.toISOString() };
        const ev = await evidenceOf(services.telemetryStore, caller!.tenantId, models, w);
        const { eligible, refused } = choose(ev, body);
        const refusedOut = refused.map((r) => ({ model_id: r.evidence.model_id, name: r.evidence.name, version: r.evidence.version, reasons: r.reasons }));
        if (!eligible.length) {
          throw new Conflict(models.length ? `No model of task ${body.task} meets the request's limits` : `No model of task ${body.task} is registered`, 'NO_ELIGIBLE_MODEL', { refused: refusedOut });
        }
        const [best, ...rest] = eligible;
        const chosen = models.find((m) => m.id === best!.evidence.model_id)!;
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'route_model_request', target_type: 'model', target_id: chosen.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: { task: body.task, prefer: body.prefer } });
        return {
          model: chosen,
          evidence: best!.evidence,
          quality: best!.quality,
          runners_up: rest.map((r) => ({ model_id: r.evidence.model_id, name: r.evidence.name, version: r.evidence.version, evidence: r.evidence, quality: r.quality })),
          refused: refusedOut,
          method: `filter by limits, then order by ${body.prefer} (ties: cost, p95 latency, quality)`,
          window: w,
          inputs: ['registry models of the task', 'telemetry llm-call events', 'telemetry evaluation events'],
        };
      },
    }),
  ];
}
