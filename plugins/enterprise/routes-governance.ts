// Governance (execute through policy and approval; the audit log) and the human side of
// human-AI work: pending approvals (the agi approval store) and feedback on decisions.
import crypto from 'node:crypto';
import { z } from 'zod';
import { actionRecordSchema } from '../../core/actions';
import { HttpError, invalid, NotFound } from '../../core/errors';
import type { RouteMaker } from '../../core/plugin';
import { roleAtLeast } from '../../core/roles';
import { tenantScope } from '../../core/tenancy';
import { approvalSchema, executedSchema, proposedActionSchema } from '../../core/contracts/governance';
import type { Deps } from './deps';
import { page } from './schemas';

export const governanceRoutes = (route: RouteMaker<Deps>) => [
  route({
    method: 'post',
    path: '/governance/execute',
    summary: 'Run an action through the governance policies: it runs when allowed, waits as an approval request when a human must decide, 403 POLICY_BLOCKED when a policy forbids it',
    description: 'Answers status executed (with the result), pending_approval (with the request) or failed (the operation refused, with its error).',
    access: 'member',
    feature: 'enterprise',
    body: proposedActionSchema.extend({ reason: z.string().max(2000).optional() }).strict(),
    response: executedSchema,
    errors: [403, 404, 422],
    handler: async ({ body, caller, services }) => {
      const { reason, ...action } = body;
      const r = await services.governance.execute(caller!, action, { kind: 'human' }, { reason });
      if (r.status === 'blocked') throw new HttpError(403, `Blocked by policy: ${r.verdict.rules.filter((x) => x.outcome === 'block').map((x) => `${x.rule}: ${x.detail}`).join('; ')}`, {}, 'POLICY_BLOCKED', { verdict: r.verdict });
      return r;
    },
  }),
  route({
    method: 'get',
    path: '/governance/audit_logs',
    summary: "The action log of the tenant (and platform-wide actions for operators), filtered, newest first",
    access: 'viewer',
    feature: 'enterprise',
    query: z.object({ action: z.string().max(64).optional(), actor: z.string().max(128).optional(), target_type: z.string().max(32).optional(), target_id: z.string().max(128).optional(), source: z.enum(['manual', 'automated']).optional(), since: z.iso.datetime().optional(), until: z.iso.datetime().optional(), ...page }),
    response: z.object({ audit_logs: z.array(actionRecordSchema), next_cursor: z.string().nullable() }),
    errors: [422],
    handler: async ({ query, caller, services }) => {
      if (query.since && query.until && query.since >= query.until) throw invalid(['query', 'since'], 'since must be before until');
      const { actions, next_cursor } = await services.actions.list({ ...query, scope: { tenant_id: caller!.tenantId, platform: roleAtLeast(caller!.role, 'operator') } });
      return { audit_logs: actions, next_cursor };
    },
  }),
  route({
    method: 'get',
    path: '/human-ai/approvals/pending',
    summary: 'Actions waiting for a human decision (the same requests as /agi/approvals?state=pending)',
    access: 'viewer',
    feature: 'enterprise',
    query: z.object(page),
    response: z.object({ approvals: z.array(approvalSchema), next_cursor: z.string().nullable() }),
    errors: [422],
    handler: async ({ query, caller, services }) => {
      const { items, next_cursor } = await services.approvals.list(caller!, { state: 'pending', ...query });
      return { approvals: items, next_cursor };
    },
  }),
  route({
    method: 'post',
    path: '/human-ai/approvals/{approval_id}/approve',
    summary: 'Approve a pending request (same as /agi/approvals/{request_id}/approve): the action runs as the approver',
    access: 'member',
    feature: 'enterprise',
    params: z.object({ approval_id: z.uuid() }),
    body: z.object({ comment: z.string().max(2000).optional() }).strict().default({}),
    response: approvalSchema,
    errors: [403, 404, 409, 422],
    handler: ({ params, body, caller, services }) => services.approvals.decide(caller!, params.approval_id, 'approve', body.comment ?? null),
  }),
  route({
    method: 'post',
    path: '/human-ai/feedback',
    summary: "A person's rating (1-5) of a decision: an insight chain or an approval request of the tenant",
    access: 'member',
    feature: 'enterprise',
    body: z.object({ subject_type: z.enum(['insight_chain', 'approval']), subject_id: z.uuid(), rating: z.number().int().min(1).max(5), comment: z.string().max(4000).optional() }).strict(),
    response: z.object({ id: z.string(), tenant_id: z.string(), subject_type: z.string(), subject_id: z.string(), rating: z.number().int(), comment: z.string().nullable(), created_by: z.string(), created_at: z.string(), subject_feedback: z.object({ count: z.number().int(), mean_rating: z.number() }) }),
    status: 201,
    errors: [404, 422],
    handler: async ({ body, caller, services }) => {
      try {
        if (body.subject_type === 'insight_chain') await services.insights.get(caller!.tenantId, body.subject_id);
        else await services.approvals.get(caller!, body.subject_id);
      } catch (err) {
        if (err instanceof NotFound) throw new NotFound(`No ${body.subject_type.replace('_', ' ')} ${body.subject_id}`);
        throw err;
      }
      const at = services.clock.now().toISOString();
      const row = { id: crypto.randomUUID(), subject_type: body.subject_type, subject_id: body.subject_id, rating: body.rating, comment: body.comment ?? null, created_by: caller!.id, created_at: at, updated_at: at };
      const scope = tenantScope(services.db, caller!);
      await scope.insert('enterprise_feedback', row);
      await services.actions.record({ source: 'manual', actor: caller!.id, action: 'rate_decision', target_type: body.subject_type, target_id: body.subject_id, result: 'succeeded', tenant_id: caller!.tenantId, detail: { rating: body.rating } });
      const agg = (await scope.select('enterprise_feedback').where({ subject_type: body.subject_type, subject_id: body.subject_id }).count({ n: '*' }).avg({ m: 'rating' }).first()) as { n: unknown; m: unknown };
      const { updated_at: _u, ...out } = row;
      return { ...out, tenant_id: caller!.tenantId, subject_feedback: { count: Number(agg.n), mean_rating: Number(agg.m) } };
    },
  }),
];
