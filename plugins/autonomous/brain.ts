// The corporate brain: the tenant's planning loop (provided by plugin agi) seen as a planner:
// start it, run an iteration now, and read its status, plan and progress.
import { z } from 'zod';
import type { RouteMaker } from '../../core/plugin';
import type { Deps } from './deps';

const rec = z.record(z.string(), z.unknown());
const loop = z.object({ id: z.string(), tenant_id: z.string(), state: z.enum(['running', 'stopped']), interval_seconds: z.number().int(), window_seconds: z.number().int(), started_by: z.string(), stopped_at: z.string().nullable(), created_at: z.string(), updated_at: z.string() });
const objective = z.object({ id: z.string(), kpi: z.string(), scope: z.string(), target: z.string(), value: z.number().nullable(), status: z.enum(['met', 'unmet', 'no_data']) });
const planned = z.object({ objective: z.string(), kind: z.string(), target: z.string(), params: rec, reason: z.string(), chain_id: z.string(), status: z.string(), approval_id: z.string().nullable() });
const iteration = z.object({ id: z.string(), loop_id: z.string().nullable(), tenant_id: z.string(), trigger: z.enum(['schedule', 'manual']), kpis: z.unknown(), objectives: z.array(objective), decisions: z.array(planned), error: z.string().nullable(), created_at: z.string(), finished_at: z.string().nullable() });

export const brainRoutes = (route: RouteMaker<Deps>) => [
  route({
    method: 'post',
    path: '/corporate-brain/start',
    summary: "Start the tenant's planning loop: every interval_seconds it measures KPIs, sets objectives and proposes actions (which wait for approval)",
    access: 'member',
    body: z.object({ interval_seconds: z.number().int().min(10).max(86_400).optional(), window_seconds: z.number().int().min(60).max(30 * 86400).optional() }).strict().default({}),
    response: loop,
    status: 201,
    errors: [409, 422],
    handler: ({ body, caller, services }) => services.planning.start(caller!, body),
  }),
  route({
    method: 'post',
    path: '/corporate-brain/planning-loop',
    summary: 'Run one planning iteration now (observe → orient → decide → act); recorded like scheduled ones',
    access: 'member',
    response: iteration,
    handler: ({ caller, services }) => services.planning.iterate(caller!),
  }),
  route({
    method: 'get',
    path: '/corporate-brain/status',
    summary: 'Whether the planning loop runs, its schedule, and its last iteration',
    access: 'viewer',
    response: z.object({ running: z.boolean(), loop: loop.nullable(), last_iteration: iteration.nullable(), iterations: z.number().int(), objectives_unmet: z.number().int(), actions_pending_approval: z.number().int() }),
    handler: async ({ caller, services }) => {
      const t = caller!.tenantId;
      const loopNow = await services.planning.current(t);
      const last = (await services.planning.iterations(t, { limit: 1 })).items[0] ?? null;
      const plan = await services.planning.plan(t);
      const figures = await services.planning.figures(t);
      return { running: !!loopNow, loop: loopNow, last_iteration: last, iterations: figures.iterations, objectives_unmet: plan.objectives.filter((o) => o.status === 'unmet').length, actions_pending_approval: plan.actions.filter((a) => a.approval_state === 'pending').length };
    },
  }),
  route({
    method: 'get',
    path: '/corporate-brain/plan',
    summary: 'Objectives from the latest KPIs, the actions planned for them and the state of their approvals',
    access: 'viewer',
    response: z.object({ iteration_id: z.string().nullable(), generated_at: z.string().nullable(), objectives: z.array(objective), actions: z.array(planned.extend({ iteration_id: z.string(), decided_at: z.string(), approval_state: z.string().nullable() })) }),
    handler: ({ caller, services }) => services.planning.plan(caller!.tenantId),
  }),
  route({
    method: 'get',
    path: '/corporate-brain/progress',
    summary: 'KPI movement since each applied action: before, predicted, at its outcome, and now',
    access: 'viewer',
    response: z.object({ method: z.string(), items: z.array(z.object({ chain_id: z.string(), kind: z.string(), target: z.string(), metric: z.string(), params: rec, before: z.number().nullable(), predicted: z.number().nullable(), after: z.number().nullable(), now: z.number().nullable(), change: z.number().nullable(), applied_at: z.string() })) }),
    handler: ({ caller, services }) => services.planning.progress(caller!.tenantId),
  }),
];
