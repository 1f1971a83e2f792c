import { z } from 'zod';
import { approvalSchema, APPROVAL_STATES, proposedActionSchema, verdictSchema } from '../../core/contracts/governance';
import type { RouteMaker } from '../../core/plugin';
import type { Deps } from './deps';
import { iterationSchema, loopSchema, page } from './schemas';

const requestParams = z.object({ request_id: z.uuid() });
const decideBody = z.object({ comment: z.string().max(2000).optional() }).default({});

export const loopRoutes = (route: RouteMaker<Deps>) => [
  route({
    method: 'get',
    path: '/cognitive_loop/status',
    summary: "The tenant's planning loop: whether it runs, its schedule, and its latest iterations",
    access: 'viewer',
    feature: 'agi',
    response: z.object({ running: z.boolean(), loop: loopSchema.nullable(), next_iteration_at: z.string().nullable(), iterations: z.array(iterationSchema), loops: z.array(loopSchema) }),
    handler: async ({ caller, services }) => {
      const t = caller!.tenantId;
      const loop = await services.planning.current(t);
      const its = await services.planning.iterations(t, { limit: 10 });
      const last = its.items.find((i) => i.trigger === 'schedule' && i.loop_id === loop?.id);
      const from = last ? Date.parse(last.created_at) : loop ? Date.parse(loop.created_at) : 0;
      return {
        running: !!loop,
        loop,
        next_iteration_at: loop ? new Date(from + loop.interval_seconds * 1000).toISOString() : null,
        iterations: its.items,
        loops: (await services.planning.loops(t, 20)).items,
      };
    },
  }),
  route({
    method: 'get',
    path: '/cognitive_loop/{loop_id}',
    summary: 'One loop and its iterations (observe: KPIs, orient: objectives, decide/act: decisions), newest first',
    access: 'viewer',
    feature: 'agi',
    params: z.object({ loop_id: z.uuid() }),
    query: z.object(page),
    response: loopSchema.extend({ iterations: z.array(iterationSchema), next_cursor: z.string().nullable() }),
    errors: [404, 422],
    handler: async ({ params, query, caller, services }) => {
      const loop = await services.planning.loop(caller!.tenantId, params.loop_id);
      const { items, next_cursor } = await services.planning.iterations(caller!.tenantId, { loop_id: loop.id, ...query });
      return { ...loop, iterations: items, next_cursor };
    },
  }),
  route({
    method: 'get',
    path: '/cognitive/kpis',
    summary: "The loop's own figures: decisions, acceptance rate, prediction error, value of applied changes",
    access: 'viewer',
    feature: 'agi',
    response: z.object({
      method: z.string(),
      decisions: z.number().int(),
      actions_proposed: z.number().int(),
      approved: z.number().int(),
      rejected: z.number().int(),
      expired: z.number().int(),
      pending: z.number().int(),
      acceptance_rate: z.number().nullable(),
      predictions_settled: z.number().int(),
      mean_absolute_prediction_error: z.number().nullable(),
      mean_relative_prediction_error: z.number().nullable(),
      applied_changes: z.number().int(),
      value_of_applied_changes: z.record(z.string(), z.number()),
      iterations: z.number().int(),
    }),
    handler: ({ caller, services }) => services.planning.figures(caller!.tenantId),
  }),
  route({
    method: 'get',
    path: '/approvals',
    summary: "The tenant's approval requests (actions waiting for a human, and decided ones), newest first",
    access: 'viewer',
    feature: 'agi',
    query: z.object({ state: z.enum(APPROVAL_STATES).optional(), ...page }),
    response: z.object({ approvals: z.array(approvalSchema), next_cursor: z.string().nullable() }),
    errors: [422],
    handler: async ({ query, caller, services }) => {
      const { items, next_cursor } = await services.approvals.list(caller!, query);
      return { approvals: items, next_cursor };
    },
  }),
  route({
    method: 'get',
    path: '/approvals/{request_id}',
    summary: 'One approval request with the verdict that made it wait',
    access: 'viewer',
    feature: 'agi',
    params: requestParams,
    response: approvalSchema,
    errors: [404, 422],
    handler: ({ params, caller, services }) => services.approvals.get(caller!, params.request_id),
  }),
  ...(['approve', 'reject'] as const).map((decision) =>
    route({
      method: 'post',
      path: `/approvals/{request_id}/${decision}`,
      summary: decision === 'approve' ? "Approve a pending request: the action runs as the approver (who needs the action's role and may not be its requester)" : 'Reject a pending request: the action does not run',
      access: 'member',
      feature: 'agi',
      params: requestParams,
      body: decideBody,
      response: approvalSchema,
      errors: [403, 404, 409, 422],
      handler: ({ params, body, caller, services }) => services.approvals.decide(caller!, params.request_id, decision, body.comment ?? null),
    }),
  ),
  route({
    method: 'post',
    path: '/policy/validate',
    summary: 'Check a proposed action against the governance policies (role, blast radius, change windows, budget, origin); nothing runs',
    access: 'viewer',
    feature: 'agi',
    body: proposedActionSchema.extend({ agent_id: z.string().min(1).max(64).optional() }),
    response: verdictSchema.extend({ action: z.object({ kind: z.string(), target: z.string(), params: z.record(z.string(), z.unknown()) }), allowed: z.boolean() }),
    errors: [404, 422],
    handler: async ({ body, caller, services }) => {
      const { agent_id, ...action } = body;
      const v = await services.governance.validate(caller!, action, agent_id ? { kind: 'agent', agent_id } : { kind: 'human' });
      return { action, allowed: v.decision === 'allow', ...v };
    },
  }),
];
