import crypto from 'node:crypto';
import { z } from 'zod';
import type { RouteDef, RouteMaker } from '../../../core/plugin';
import type { Deps } from '../deps';
import { recordView } from '../customers/service';
import { STEP_ORDER, type StepName } from '../customers/templates';
import type { ProvisionSpec } from '../customers/provision';
import { gated, jsonObject } from '../schemas';
import { idempotencyKey } from './certs';

export const tenantIdSchema = z.string().regex(/^[a-z0-9][a-z0-9-]{2,63}$/, '3 to 64 characters: lowercase letters, digits and dashes');
export const quotas = z.record(z.string().min(1).max(64), z.object({ max_concurrent: z.number().int().min(1).max(10_000), tasks_per_minute: z.number().int().min(1).max(10_000_000) }));
const workflowStep = z.object({ id: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/), kernel: z.string().min(1).max(64), task: z.string().min(1).max(64), input: z.unknown().default({}) });

export const stepResult = z.object({ name: z.enum(STEP_ORDER), state: z.enum(['pending', 'succeeded', 'failed', 'skipped', 'not_configured']), detail: jsonObject, at: z.string().nullable() });
export const recordSchema = z.object({
  id: z.string(),
  kind: z.enum(['customer', 'flow', 'pov']),
  customer_tenant: z.string(),
  name: z.string(),
  state: z.string(),
  spec: jsonObject,
  steps: z.array(stepResult),
  reason: z.string().nullable(),
  created_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

const onboardBody = z.object({
  name: z.string().trim().min(1).max(200),
  tenant_id: tenantIdSchema.optional(),
  plan: z.string().min(1).max(32).default('pro'),
  admin_email: z.email().max(320),
  admin_name: z.string().trim().min(1).max(200).optional(),
  kernel_quotas: quotas.default({}),
  starter_workflows: z.array(z.object({ name: z.string().trim().min(1).max(200), steps: z.array(workflowStep).min(1).max(20) })).max(10).default([]),
  first_task: z.object({ kernel: z.string().min(1).max(64), task: z.string().min(1).max(64), input: z.unknown().default({}) }).optional(),
});

const idParams = z.object({ customer_id: z.uuid() });

export function specOf(b: z.output<typeof onboardBody>, steps: StepName[] = [...STEP_ORDER]): ProvisionSpec {
  return {
    tenant_id: b.tenant_id ?? `${b.name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'customer'}-${crypto.randomBytes(3).toString('hex')}`,
    name: b.name,
    plan: b.plan,
    admin_email: b.admin_email.toLowerCase(),
    admin_name: b.admin_name ?? b.name,
    kernel_quotas: b.kernel_quotas,
    starter_workflows: b.starter_workflows as ProvisionSpec['starter_workflows'],
    first_task: (b.first_task as ProvisionSpec['first_task']) ?? null,
    steps,
  };
}

export const customerRoutes = (route: RouteMaker<Deps>): RouteDef<Deps>[] => [
  route({
    ...gated,
    method: 'post',
    path: '/automation/customers/onboard',
    summary: 'Onboard a customer now: tenant on its plan, first user invited by mail, API key, kernel quotas, starter workflows, a first task',
    description: 'An Idempotency-Key header makes a retry answer the first result. The API key step makes a key (execute and read scopes) kept sealed until the tenant takes it once at POST /automation/keys/{key_id}/reveal; it answers not_configured when no API key service (monetization) is loaded. A taken tenant id or e-mail is 409 before anything is made.',
    access: 'admin',
    body: onboardBody,
    response: recordSchema,
    status: 201,
    errors: [409, 422],
    handler: async ({ body, caller, services, req }) => recordView(await services.automation.customers.onboard(caller!, specOf(body), idempotencyKey(req.headers['idempotency-key']))),
  }),
  route({
    ...gated,
    method: 'get',
    path: '/automation/customers/{customer_id}/status',
    summary: "A customer's onboarding state and every step's outcome",
    access: 'admin',
    params: idParams,
    response: recordSchema,
    errors: [404, 422],
    handler: async ({ params, services }) => recordView(await services.automation.customers.get('customer', params.customer_id)),
  }),
  route({
    ...gated,
    method: 'post',
    path: '/automation/customers/{customer_id}/validate',
    summary: "Check every onboarding step's result again against the live state",
    access: 'admin',
    params: idParams,
    response: z.object({ customer_id: z.string(), customer_tenant: z.string(), valid: z.boolean(), checks: z.array(z.object({ step: z.string(), ok: z.boolean(), evidence: z.string() })), checked_at: z.string() }),
    errors: [404, 422],
    handler: async ({ params, caller, services }) => {
      const c = services.automation.customers;
      return c.validate(caller!, await c.get('customer', params.customer_id));
    },
  }),
  route({
    ...gated,
    method: 'delete',
    path: '/automation/customers/{customer_id}',
    summary: "Offboard a customer: the tenant's data exported in the answer, then every row it owns deleted, sessions closed",
    description: '`dry_run=true` answers the export without deleting. 409 RUNNING_WORK while the tenant has running workflows, deployments or chaos experiments.',
    access: 'admin',
    params: idParams,
    query: z.object({ dry_run: z.enum(['true', 'false']).default('false') }),
    response: z.object({
      customer_id: z.string(),
      state: z.string(),
      dry_run: z.boolean(),
      export: z.object({ tenant: jsonObject.nullable(), counts: z.record(z.string(), z.number()), tables: z.record(z.string(), z.array(z.unknown())), truncated_at: z.number() }),
      deleted: z.record(z.string(), z.number()),
    }),
    errors: [404, 409, 422],
    handler: async ({ params, query, caller, services }) => {
      const c = services.automation.customers;
      return c.offboard(caller!, await c.get('customer', params.customer_id), query.dry_run === 'true');
    },
  }),
  route({
    // Not plan-gated: the caller is usually the new tenant, whose plan need not include automation.
    method: 'post',
    path: '/automation/keys/{key_id}/reveal',
    summary: 'Take the API key an onboarding made, once: the secret is erased as it is shown',
    description: "For the key's tenant (operator) or a platform admin; anyone else gets 404. A second call answers 410 KEY_ALREADY_REVEALED.",
    access: 'operator',
    params: z.object({ key_id: z.uuid() }),
    response: z.object({ key_id: z.string(), tenant_id: z.string(), key: z.string(), revealed_at: z.string() }),
    errors: [404, 410, 422],
    handler: async ({ params, caller, services }) => services.automation.customers.keys.reveal(caller!, params.key_id),
  }),
];
