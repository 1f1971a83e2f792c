// Digital twin (state, KPI prediction under a change, recommended interventions) and resource
// planning (node counts per kernel from forecast load and a utilisation target, applied
// through governance).
import crypto from 'node:crypto';
import { z } from 'zod';
import { invalid } from '../../core/errors';
import { pageOf } from '../../core/pagination';
import type { RouteMaker } from '../../core/plugin';
import { tenantScope } from '../../core/tenancy';
import type { Deps } from './deps';
import { page } from './schemas';
import { forecastWithBacktest, kernelModels, latencyFactor, MIN_POINTS, series, utilisationAfter, type SeriesKpi } from './twin';

const win = (s: Deps, seconds: number) => {
  const until = s.clock.now();
  return { since: new Date(until.getTime() - seconds * 1000).toISOString(), until: until.toISOString(), seconds };
};
const model = z.object({ kernel: z.string(), tasks: z.number().int(), arrival_per_s: z.number(), mean_service_ms: z.number().nullable(), active_nodes: z.number().int(), threads: z.number().int(), threads_per_node: z.number(), capacity_per_s: z.number().nullable(), utilisation: z.number().nullable(), error_rate: z.number().nullable() });
const windowShape = z.object({ since: z.string(), until: z.string(), seconds: z.number() });
const decision = z.object({ id: z.string(), tenant_id: z.string(), kernel_id: z.string(), current_nodes: z.number().int(), recommended_nodes: z.number().int(), forecast: z.unknown(), state: z.string(), approval_id: z.string().nullable(), detail: z.unknown(), created_by: z.string(), created_at: z.string() });
const toDecision = (r: Record<string, any>) => ({ id: r.id, tenant_id: r.tenant_id, kernel_id: r.kernel_id, current_nodes: r.current_nodes, recommended_nodes: r.recommended_nodes, forecast: JSON.parse(r.forecast), state: r.state, approval_id: r.approval_id ?? null, detail: r.detail ? JSON.parse(r.detail) : null, created_by: r.created_by, created_at: r.created_at });
const round = (x: number | null, d = 4) => (x === null || !Number.isFinite(x) ? null : Math.round(x * 10 ** d) / 10 ** d);

export const twinRoutes = (route: RouteMaker<Deps>) => [
  route({
    method: 'get',
    path: '/digital-twin/state',
    summary: 'The platform as a model: per kernel the measured arrival rate, mean service time, threads, capacity and utilisation; the tenant\'s cost',
    access: 'viewer',
    feature: 'enterprise',
    query: z.object({ window_seconds: z.coerce.number().int().min(60).max(30 * 86400).default(3600) }),
    response: z.object({ method: z.string(), window: windowShape, kernels: z.array(model), totals: z.object({ tasks: z.number().int(), threads: z.number().int(), active_nodes: z.number().int(), cost_usd: z.number().nullable() }) }),
    errors: [422],
    handler: async ({ query, caller, services }) => {
      const w = win(services, query.window_seconds);
      const kernels = await kernelModels(services.db, services.mesh, w.since, w.seconds);
      const cost = await services.kpis.measure(caller!.tenantId, 'cost_usd', { window_seconds: w.seconds });
      return {
        method: 'each kernel as a multi-server queue fitted from its task outcomes in the window: arrival rate = tasks / window, capacity = threads x 1000 / mean service ms, utilisation = arrival / capacity',
        window: w,
        kernels,
        totals: { tasks: kernels.reduce((a, k) => a + k.tasks, 0), threads: kernels.reduce((a, k) => a + k.threads, 0), active_nodes: kernels.reduce((a, k) => a + k.active_nodes, 0), cost_usd: cost.value },
      };
    },
  }),
  route({
    method: 'post',
    path: '/digital-twin/predict/kpi',
    summary: "Forecast a kernel KPI (Holt, on the analytics kernel) and its value under a change of load or nodes, with the forecast's back-tested error",
    access: 'viewer',
    feature: 'enterprise',
    body: z
      .object({
        kernel: z.string().min(1).max(64),
        kpi: z.enum(['load_per_bucket', 'latency_p95_ms', 'error_rate']),
        window_seconds: z.number().int().min(600).max(30 * 86400).default(86_400),
        bucket_seconds: z.number().int().min(10).max(86_400).default(300),
        horizon_buckets: z.number().int().min(1).max(200).default(12),
        change: z.object({ load_factor: z.number().positive().max(100).default(1), nodes_delta: z.number().int().min(-64).max(64).default(0) }).strict().default({ load_factor: 1, nodes_delta: 0 }),
      })
      .strict(),
    response: z.object({ kernel: z.string(), kpi: z.string(), method: z.string(), window: windowShape, bucket_seconds: z.number().int(), history: z.array(z.object({ at: z.string(), value: z.number() })), baseline_forecast: z.array(z.number()), forecast: z.array(z.number().nullable()), change: z.object({ load_factor: z.number(), nodes_delta: z.number().int() }), utilisation_now: z.number().nullable(), utilisation_after: z.number().nullable(), saturated: z.boolean(), backtest: z.object({ holdout_points: z.number().int(), mae: z.number(), mape: z.number().nullable() }) }),
    errors: [409, 422],
    handler: async ({ body, caller, services }) => {
      if (!services.mesh.kernelMap.has(body.kernel)) throw invalid(['body', 'kernel'], `unknown kernel "${body.kernel}"`);
      if (body.window_seconds / body.bucket_seconds > 5000) throw invalid(['body', 'bucket_seconds'], 'at most 5000 buckets in the window');
      const w = win(services, body.window_seconds);
      const points = await series(services.db, services.mesh, body.kernel, body.kpi as SeriesKpi, w.since, w.until, body.bucket_seconds);
      const f = await forecastWithBacktest(services.mesh, caller!, points.map((p) => p.value), body.horizon_buckets);
      const m = (await kernelModels(services.db, services.mesh, w.since, w.seconds)).find((k) => k.kernel === body.kernel)!;
      const { load_factor: L, nodes_delta: d } = body.change;
      const after = utilisationAfter(m, L, d * m.threads_per_node);
      const factor = body.kpi === 'load_per_bucket' ? L : body.kpi === 'latency_p95_ms' && m.utilisation !== null && after !== null ? latencyFactor(m.utilisation, after) : 1;
      return {
        kernel: body.kernel,
        kpi: body.kpi,
        method: `${f.method} forecast of the KPI per ${body.bucket_seconds} s bucket; the change scales load by load_factor and latency by (1 - rho) / (1 - rho') (M/M/1 time in system), rho' = rho x load_factor x threads / (threads + nodes_delta x threads per node); error rate is not modelled to change; back-test: the same method fitted without the last quarter of the series, its error on that quarter`,
        window: w,
        bucket_seconds: body.bucket_seconds,
        history: points,
        baseline_forecast: f.forecast,
        forecast: f.forecast.map((x) => (factor === null ? null : x * factor)),
        change: body.change,
        utilisation_now: round(m.utilisation),
        utilisation_after: round(after),
        saturated: after !== null && after >= 1,
        backtest: f.backtest,
      };
    },
  }),
  route({
    method: 'get',
    path: '/digital-twin/interventions',
    summary: 'Changes the twin recommends (a node added where utilisation is high, removed where it is idle), each with its predicted effect',
    access: 'viewer',
    feature: 'enterprise',
    query: z.object({ window_seconds: z.coerce.number().int().min(60).max(30 * 86400).default(3600), high: z.coerce.number().gt(0).lt(1).default(0.8), low: z.coerce.number().gt(0).lt(1).default(0.1) }),
    response: z.object({ method: z.string(), window: windowShape, interventions: z.array(z.object({ kernel: z.string(), action: z.enum(['add_node', 'drain_node']), reason: z.string(), utilisation_now: z.number().nullable(), utilisation_after: z.number().nullable(), latency_factor: z.number().nullable() })) }),
    errors: [422],
    handler: async ({ query, services }) => {
      const w = win(services, query.window_seconds);
      const out = [];
      for (const m of await kernelModels(services.db, services.mesh, w.since, w.seconds)) {
        if (m.utilisation === null) continue;
        if (m.utilisation >= query.high) {
          const after = utilisationAfter(m, 1, m.threads_per_node)!;
          out.push({ kernel: m.kernel, action: 'add_node' as const, reason: `utilisation ${round(m.utilisation)} at or above ${query.high}`, utilisation_now: round(m.utilisation), utilisation_after: round(after), latency_factor: round(latencyFactor(m.utilisation, after)) });
        } else if (m.utilisation <= query.low && m.active_nodes > 1) {
          const after = utilisationAfter(m, 1, -m.threads_per_node)!;
          if (after < query.high) out.push({ kernel: m.kernel, action: 'drain_node' as const, reason: `utilisation ${round(m.utilisation)} at or below ${query.low} on ${m.active_nodes} nodes`, utilisation_now: round(m.utilisation), utilisation_after: round(after), latency_factor: round(latencyFactor(m.utilisation, after)) });
        }
      }
      return { method: 'twin state over the window; utilisation after = rho x threads / (threads ± one node); latency factor = (1 - rho) / (1 - rho\') (M/M/1), null when saturated', window: w, interventions: out };
    },
  }),
  route({
    method: 'post',
    path: '/resources/plan_scaling',
    summary: "Plan node counts per kernel from forecast load and a utilisation target; with apply, scale-ups go through governance (approval where policy says)",
    access: 'member',
    feature: 'enterprise',
    body: z.object({ target_utilisation: z.number().min(0.1).max(0.95).default(0.7), window_seconds: z.number().int().min(600).max(30 * 86400).default(86_400), bucket_seconds: z.number().int().min(10).max(86_400).default(300), horizon_buckets: z.number().int().min(1).max(200).default(12), apply: z.boolean().default(false) }).strict().default({ target_utilisation: 0.7, window_seconds: 86_400, bucket_seconds: 300, horizon_buckets: 12, apply: false }),
    response: z.object({ plan_id: z.string(), method: z.string(), decisions: z.array(decision) }),
    status: 201,
    errors: [422],
    handler: async ({ body, caller, services }) => {
      if (body.window_seconds / body.bucket_seconds > 5000) throw invalid(['body', 'bucket_seconds'], 'at most 5000 buckets in the window');
      const w = win(services, body.window_seconds);
      const planId = crypto.randomUUID();
      const decisions = [];
      for (const m of await kernelModels(services.db, services.mesh, w.since, w.seconds)) {
        const points = await series(services.db, services.mesh, m.kernel, 'load_per_bucket', w.since, w.until, body.bucket_seconds);
        let recommended = m.active_nodes;
        let forecast: Record<string, unknown> = { points: points.length };
        let state = 'no_change';
        const detail: Record<string, unknown> = { plan_id: planId };
        if (points.filter((p) => p.value > 0).length < MIN_POINTS || m.mean_service_ms === null) {
          state = 'insufficient_data';
          detail.reason = `fewer than ${MIN_POINTS} buckets with tasks in the window`;
        } else {
          const f = await forecastWithBacktest(services.mesh, caller!, points.map((p) => p.value), body.horizon_buckets);
          const peak = Math.max(...f.forecast) / body.bucket_seconds;
          const threads = Math.ceil((peak * m.mean_service_ms) / 1000 / body.target_utilisation);
          recommended = Math.max(1, Math.ceil(threads / m.threads_per_node));
          forecast = { method: f.method, peak_arrival_per_s: peak, mean_service_ms: m.mean_service_ms, threads_needed: threads, backtest: f.backtest };
          if (recommended > m.active_nodes) state = 'planned';
          if (recommended < m.active_nodes) {
            state = 'planned';
            detail.note = 'scale-down is not applied automatically: drain then remove the surplus nodes (/mesh)';
          }
        }
        let approvalId: string | null = null;
        if (body.apply && state === 'planned' && recommended > m.active_nodes) {
          const results = [];
          for (let i = m.active_nodes; i < recommended; i++) {
            const r = await services.governance.execute(caller!, { kind: 'add_node', target: m.kernel, params: {} }, { kind: 'human' }, { reason: `scaling plan ${planId}` });
            results.push({ status: r.status, error: r.error, approval_id: r.approval?.id ?? null });
            approvalId ??= r.approval?.id ?? null;
            if (r.status !== 'executed') break;
          }
          state = results.every((r) => r.status === 'executed') ? 'applied' : results.at(-1)!.status;
          detail.applied = results;
        }
        const at = services.clock.now().toISOString();
        const row = { id: crypto.randomUUID(), kernel_id: m.kernel, current_nodes: m.active_nodes, recommended_nodes: recommended, forecast: JSON.stringify(forecast), state, approval_id: approvalId, detail: JSON.stringify(detail), created_by: caller!.id, created_at: at, updated_at: at };
        await tenantScope(services.db, caller!).insert('enterprise_scaling', row);
        decisions.push(toDecision({ ...row, tenant_id: caller!.tenantId }));
      }
      await services.actions.record({ source: 'manual', actor: caller!.id, action: 'plan_scaling', target_type: 'scaling_plan', target_id: planId, result: 'succeeded', tenant_id: caller!.tenantId, detail: { apply: body.apply, kernels: decisions.length } });
      return { plan_id: planId, method: `per kernel: Holt forecast of tasks per ${body.bucket_seconds} s bucket; threads needed = peak forecast arrivals/s x mean service s / target utilisation ${body.target_utilisation}; nodes = threads needed / threads per node`, decisions };
    },
  }),
  route({
    method: 'get',
    path: '/resources/scaling_decisions',
    summary: 'Scaling decisions of past plans, newest first: recommended node counts, their forecast and what was applied',
    access: 'viewer',
    feature: 'enterprise',
    query: z.object({ kernel_id: z.string().max(64).optional(), ...page }),
    response: z.object({ scaling_decisions: z.array(decision), next_cursor: z.string().nullable() }),
    errors: [422],
    handler: async ({ query, caller, services }) => {
      const q = tenantScope(services.db, caller!).select('enterprise_scaling');
      if (query.kernel_id) q.where('kernel_id', query.kernel_id);
      const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
      return { scaling_decisions: items.map(toDecision), next_cursor };
    },
  }),
];
