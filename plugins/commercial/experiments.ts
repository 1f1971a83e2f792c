import crypto from 'node:crypto';
import { z } from 'zod';
import { invalid, NotFound } from '../../core/errors';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import type { Caller } from '../../core/roles';
import { namedTenantScope } from '../../core/tenancy';
import type { Deps } from './index';

// ROI experiments: two variants of a kernel task run alternately on the real kernels; a
// measure of each run (its latency, or a number from its output) is compared with a Welch
// t-interval computed on the analytics kernel.

const KINDS = { trading: { kernel: 'trading', task: 'portfolio_risk' }, support: { kernel: 'llm', task: 'similarity' } } as const;
type Kind = keyof typeof KINDS;

const variant = z.record(z.string(), z.unknown());
const startBody = z.strictObject({
  tenant_id: z.string().min(1).max(64).optional(),
  task: z.string().min(1).max(64).optional(),
  variant_a: variant,
  variant_b: variant,
  samples: z.number().int().min(2).max(10_000).default(20),
  /** latency_ms, or a dot path to a number in the task's output (e.g. `var`, `results.0.score`). */
  metric: z.string().regex(/^(latency_ms|[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*)$/).default('latency_ms'),
  confidence: z.number().gt(0.5).lt(1).default(0.95),
});
const STATES = ['queued', 'running', 'succeeded', 'failed'] as const;
export const experimentView = z.object({
  id: z.string(), tenant_id: z.string(), kind: z.enum(['trading', 'support']), state: z.enum(STATES), kernel: z.string(), task: z.string(), metric: z.string(), samples: z.number().int(),
  result: z.record(z.string(), z.unknown()).nullable(), error: z.string().nullable(), created_at: z.string(), started_at: z.string().nullable(), finished_at: z.string().nullable(),
});

function toView(r: Record<string, any>) {
  const spec = JSON.parse(r.spec);
  return {
    id: r.id, tenant_id: r.tenant_id, kind: r.kind, state: r.state, kernel: spec.kernel, task: spec.task, metric: spec.metric, samples: spec.samples,
    result: r.result ? JSON.parse(r.result) : null, error: r.error ?? null, created_at: r.created_at, started_at: r.started_at ?? null, finished_at: r.finished_at ?? null,
  };
}

function measure(metric: string, output: unknown, ms: number): number {
  if (metric === 'latency_ms') return ms;
  let v: unknown = output;
  for (const k of metric.split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`the output has no number at "${metric}"`);
  return v;
}

async function runExperiment(d: Deps, id: string, caller: Caller): Promise<void> {
  const set = async (patch: Record<string, unknown>) => {
    await d.db('roi_experiments').where({ id }).update(patch);
    const row = await d.db('roi_experiments').where({ id }).first();
    d.events.publish('roi_experiment', { tenant_id: row.tenant_id, experiment: toView(row) });
  };
  const row = await d.db('roi_experiments').where({ id }).first();
  const spec = JSON.parse(row.spec);
  await set({ state: 'running', started_at: d.clock.now().toISOString() });
  try {
    const values: { a: number[]; b: number[] } = { a: [], b: [] };
    // Alternating A and B spreads any drift of the machine over both variants.
    for (let i = 0; i < spec.samples; i++) {
      for (const v of ['a', 'b'] as const) {
        const t0 = performance.now();
        const out = await d.mesh.run(spec.kernel, spec.task, v === 'a' ? spec.variant_a : spec.variant_b, { caller });
        values[v].push(measure(spec.metric, out, performance.now() - t0));
      }
    }
    const stats = await d.mesh.run('analytics', 'ab_difference', { a: values.a, b: values.b, confidence: spec.confidence });
    const result = { ...(stats as object), metric: spec.metric, reading: 'difference = mean(b) - mean(a); the interval excludes 0 when the variants differ at this confidence', window: { from: row.created_at, to: d.clock.now().toISOString() } };
    await set({ state: 'succeeded', result: JSON.stringify(result), finished_at: d.clock.now().toISOString() });
  } catch (err) {
    await set({ state: 'failed', error: (err as Error).message, finished_at: d.clock.now().toISOString() });
  }
}

function startRoute(route: RouteMaker<Deps>, kind: Kind): RouteDef {
  return route({
    method: 'post',
    path: `/customer/roi/experiments/${kind}/start`,
    summary: `Start an A/B experiment on the ${KINDS[kind].kernel} kernel (default task ${KINDS[kind].task}): both variants run alternately, ${'`samples`'} times each, and the difference of their measure is reported with a Welch t confidence interval`,
    description: 'Answers 202 with the experiment (queued); it moves to running and succeeded or failed, published as `roi_experiment` events; poll GET /customer/roi/experiments/{experiment_id}.',
    access: 'member',
    body: startBody,
    response: experimentView,
    status: 202,
    errors: [404, 422],
    handler: async ({ body, caller, services }) => {
      const scope = namedTenantScope(services.db, caller!, body.tenant_id ?? caller!.tenantId);
      if (!(await services.db('tenants').where({ id: scope.tenantId }).first('id'))) throw new NotFound('Tenant not found');
      if (body.samples > services.config.commercial.maxExperimentSamples) throw invalid(['body', 'samples'], `at most ${services.config.commercial.maxExperimentSamples}`);
      const kernel = KINDS[kind].kernel;
      const task = body.task ?? KINDS[kind].task;
      if (!services.mesh.kernel(kernel).tasks.includes(task)) throw invalid(['body', 'task'], `unknown task of kernel ${kernel}`);
      for (const v of ['variant_a', 'variant_b'] as const) {
        const issues = services.mesh.validateInput(kernel, task, body[v]);
        if (issues.length) throw invalid(['body', v, ...issues[0].loc.slice(1)], issues[0].msg);
      }
      const now = services.clock.now().toISOString();
      const spec = { kernel, task, variant_a: body.variant_a, variant_b: body.variant_b, samples: body.samples, metric: body.metric, confidence: body.confidence };
      const row = { id: crypto.randomUUID(), tenant_id: scope.tenantId, kind, state: 'queued', spec: JSON.stringify(spec), result: null, error: null, created_by: caller!.id, created_at: now, started_at: null, finished_at: null };
      await services.db('roi_experiments').insert(row);
      await services.actions.record({ source: 'manual', actor: caller!.id, action: `start_roi_experiment_${kind}`, target_type: 'roi_experiment', target_id: row.id, result: 'succeeded', tenant_id: scope.tenantId });
      // The tasks run for the tenant the experiment is for (metered there).
      // Tracked: a stopping host waits for it (bounded) before closing the database.
      services.pipeline.track(runExperiment(services, row.id, { ...caller!, tenantId: scope.tenantId }).catch(() => undefined));
      return toView(row);
    },
  });
}

export function experimentRoutes(route: RouteMaker<Deps>): RouteDef[] {
  return [
    startRoute(route, 'trading'),
    startRoute(route, 'support'),
    route({
      method: 'get',
      path: '/customer/roi/experiments/{experiment_id}',
      summary: 'One ROI experiment: its state and, when it succeeded, each variant and the difference with its confidence interval (beyond the spec)',
      access: 'viewer',
      params: z.object({ experiment_id: z.uuid() }),
      response: experimentView,
      errors: [404],
      handler: async ({ params, caller, services }) => {
        const q = services.db('roi_experiments').where({ id: params.experiment_id });
        if (caller!.role !== 'admin') q.andWhere({ tenant_id: caller!.tenantId });
        const row = await q.first();
        if (!row) throw new NotFound('Experiment not found');
        return toView(row);
      },
    }),
  ];
}

export async function latestExperiments(d: Deps, tenantId: string) {
  const rows = await d.db('roi_experiments').where({ tenant_id: tenantId, state: 'succeeded' }).orderBy('finished_at', 'desc').limit(10);
  return rows.map(toView);
}
