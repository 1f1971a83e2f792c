import crypto from 'node:crypto';
import { z } from 'zod';
import { NotFound } from '../../../core/errors';
import type { RouteDef, RouteMaker } from '../../../core/plugin';
import type { Deps } from '../deps';
import { recordView } from '../customers/service';
import { TEMPLATES } from '../customers/templates';
import { povProgress } from '../customers/pov';
import { jsonObject } from '../schemas';
import { quotas, recordSchema, specOf, tenantIdSchema } from './customers';

const customerType = z.enum(Object.keys(TEMPLATES) as [string, ...string[]]);
const template = z.object({
  customer_type: z.string(),
  description: z.string(),
  plan: z.string(),
  kernel_quotas: quotas,
  starter_workflows: z.array(z.object({ name: z.string(), steps: z.array(z.object({ id: z.string(), kernel: z.string(), task: z.string(), input: z.unknown() })) })),
  first_task: z.object({ kernel: z.string(), task: z.string(), input: z.unknown() }),
  steps: z.array(z.string()),
});
const flowParams = z.object({ flow_id: z.uuid() });
const povParams = z.object({ deployment_id: z.uuid() });
const criterion = z.object({
  metric: z.enum(['successful_tasks', 'success_ratio', 'p95_latency_ms']),
  target: z.number().positive(),
  kernel: z.string().min(1).max(64).optional(),
});

function fromTemplate(type: string, b: { name: string; admin_email: string; admin_name?: string; tenant_id?: string; plan?: string }) {
  const t = TEMPLATES[type]!;
  return specOf({ name: b.name, admin_email: b.admin_email, admin_name: b.admin_name, tenant_id: b.tenant_id, plan: b.plan ?? t.plan, kernel_quotas: t.kernel_quotas, starter_workflows: t.starter_workflows, first_task: t.first_task } as never);
}

export const onboardingRoutes = (route: RouteMaker<Deps>): RouteDef<Deps>[] => [
  route({
    method: 'get',
    path: '/onboarding/templates/{customer_type}',
    summary: 'The onboarding template of a kind of customer: kernels with quotas, starter workflows, first task, steps',
    access: 'viewer',
    params: z.object({ customer_type: z.string().min(1).max(64) }),
    response: template,
    errors: [404],
    handler: ({ params }) => {
      const t = TEMPLATES[params.customer_type];
      if (!t) throw new NotFound(`No template "${params.customer_type}"; known: ${Object.keys(TEMPLATES).join(', ')}`);
      return t;
    },
  }),
  route({
    method: 'post',
    path: '/onboarding/create',
    summary: 'Create an onboarding flow from a template (run it with /onboarding/{flow_id}/execute)',
    access: 'admin',
    body: z.object({ customer_type: customerType, name: z.string().trim().min(1).max(200), admin_email: z.email().max(320), admin_name: z.string().trim().min(1).max(200).optional(), tenant_id: tenantIdSchema.optional(), plan: z.string().min(1).max(32).optional() }),
    response: recordSchema,
    status: 201,
    errors: [409, 422],
    handler: async ({ body, caller, services }) => {
      const c = services.automation.customers;
      const spec = fromTemplate(body.customer_type, body);
      await c.check(spec, true);
      return recordView(await c.create(caller!, 'flow', spec, 'created', { customer_type: body.customer_type }));
    },
  }),
  route({
    method: 'post',
    path: '/onboarding/{flow_id}/execute',
    summary: "Run a flow's steps in order in the background (202): tenant, user, key, quotas, starter workflows, first task",
    access: 'admin',
    params: flowParams,
    response: recordSchema,
    status: 202,
    errors: [404, 409, 422],
    handler: async ({ params, caller, services }) => {
      const c = services.automation.customers;
      return recordView(await c.start(caller!, await c.get('flow', params.flow_id)));
    },
  }),
  route({
    method: 'get',
    path: '/onboarding/{flow_id}',
    summary: 'A flow with its state and each step\'s outcome',
    access: 'admin',
    params: flowParams,
    response: recordSchema,
    errors: [404, 422],
    handler: async ({ params, services }) => recordView(await services.automation.customers.get('flow', params.flow_id)),
  }),
  route({
    method: 'post',
    path: '/pov/generate',
    summary: 'Define a proof-of-value environment: an isolated tenant with quotas, starter workflows and success criteria',
    access: 'admin',
    body: z.object({
      customer_type: customerType,
      name: z.string().trim().min(1).max(200),
      admin_email: z.email().max(320),
      duration_days: z.number().int().min(1).max(365).default(14),
      criteria: z.array(criterion).min(1).max(20),
    }),
    response: recordSchema,
    status: 201,
    errors: [409, 422],
    handler: async ({ body, caller, services }) => {
      const c = services.automation.customers;
      const spec = fromTemplate(body.customer_type, { name: body.name, admin_email: body.admin_email, tenant_id: `pov-${crypto.randomBytes(6).toString('hex')}` });
      await c.check(spec, true);
      return recordView(await c.create(caller!, 'pov', spec, 'created', { customer_type: body.customer_type, duration_days: body.duration_days, criteria: body.criteria }));
    },
  }),
  route({
    method: 'post',
    path: '/pov/{deployment_id}/deploy',
    summary: 'Provision the proof-of-value environment in the background (202)',
    access: 'admin',
    params: povParams,
    response: recordSchema,
    status: 202,
    errors: [404, 409, 422],
    handler: async ({ params, caller, services }) => {
      const c = services.automation.customers;
      return recordView(await c.start(caller!, await c.get('pov', params.deployment_id)));
    },
  }),
  route({
    method: 'get',
    path: '/pov/{deployment_id}',
    summary: 'Provisioning state and progress against each success criterion, measured from the tenant\'s task outcomes',
    access: 'admin',
    params: povParams,
    response: recordSchema.extend({
      progress: z.object({
        window: z.object({ from: z.string(), to: z.string(), ends_at: z.string() }),
        method: z.string(),
        inputs: jsonObject,
        criteria: z.array(criterion.extend({ measured: z.number().nullable(), met: z.boolean() })),
        met: z.boolean(),
      }),
    }),
    errors: [404, 422],
    handler: async ({ params, services }) => {
      const row = await services.automation.customers.get('pov', params.deployment_id);
      return { ...recordView(row), progress: await povProgress(services.db, services.mesh, row) };
    },
  }),
];
