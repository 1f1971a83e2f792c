import crypto from 'node:crypto';
import { z } from 'zod';
import { invalid, NotFound, StateConflict } from '../../core/errors';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import type { Caller } from '../../core/roles';
import type { Deps } from './index';

const stepNames = ['create_tenant', 'assign_plan', 'create_admin_user', 'create_api_keys', 'set_kernel_quotas', 'create_starter_workflows'] as const;
const stepView = z.object({ name: z.enum(stepNames), state: z.enum(['pending', 'succeeded', 'failed']), result: z.record(z.string(), z.unknown()).nullable(), error: z.string().nullable(), finished_at: z.string().nullable() });
type Step = z.infer<typeof stepView>;

const spec = z.strictObject({
  customer_name: z.string().trim().min(1).max(200),
  tenant_id: z.string().regex(/^[a-z0-9][a-z0-9-]{2,63}$/, '3 to 64 lowercase letters, digits and dashes'),
  plan: z.string().min(1).max(32),
  domains: z.array(z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,252}$/)).max(100).default([]),
  admin: z.strictObject({ email: z.email().max(320), name: z.string().trim().min(1).max(200) }),
  api_keys: z.array(z.strictObject({ name: z.string().min(1).max(128), scopes: z.array(z.enum(['execute', 'read', 'write'])).min(1) })).max(20).default([]),
  kernel_quotas: z.record(z.string(), z.number().int().min(0).max(100_000_000)).default({}),
  starter_workflows: z.array(z.strictObject({ name: z.string().min(1).max(200), steps: z.array(z.object({ id: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/), kernel: z.string(), task: z.string(), input: z.unknown() })).max(50) })).max(20).default([]),
});
const planView = z.object({ id: z.string(), state: z.enum(['draft', 'running', 'succeeded', 'failed']), spec, steps: z.array(stepView), runs: z.number().int(), created_by: z.string(), created_at: z.string(), updated_at: z.string() });

function toPlan(r: Record<string, any>) {
  return { id: r.id, state: r.state, spec: JSON.parse(r.spec), steps: JSON.parse(r.steps), runs: Number(r.runs), created_by: r.created_by, created_at: r.created_at, updated_at: r.updated_at };
}

type Plan = ReturnType<typeof toPlan>;
type Services = Deps;

/** Each step does its part only if it is not done yet, so running a plan again is safe. */
async function runStep(name: Step['name'], p: z.infer<typeof spec>, s: Services, actor: string, secrets: Record<string, string>): Promise<Record<string, unknown>> {
  const t = p.tenant_id;
  switch (name) {
    case 'create_tenant': {
      if (await s.db('tenants').where({ id: t }).first('id')) return { tenant_id: t, created: false };
      await s.db('tenants').insert({ id: t, name: p.customer_name, plan: 'free', domains: JSON.stringify(p.domains), created_at: s.clock.now().toISOString() });
      await s.actions.record({ source: 'manual', actor, action: 'create_tenant', target_type: 'tenant', target_id: t, result: 'succeeded', tenant_id: t, detail: { plan: 'free', by: 'provisioning' } });
      return { tenant_id: t, created: true };
    }
    case 'assign_plan': {
      const cur = await s.db('tenants').where({ id: t }).first('plan');
      if (cur.plan === p.plan) return { plan: p.plan, changed: false };
      await s.db('tenants').where({ id: t }).update({ plan: p.plan });
      s.limits.planChanged(t);
      s.features.planChanged(t);
      await s.actions.record({ source: 'manual', actor, action: 'assign_plan', target_type: 'tenant', target_id: t, result: 'succeeded', tenant_id: t, detail: { from: cur.plan, to: p.plan } });
      return { plan: p.plan, changed: true, previous: cur.plan };
    }
    case 'create_admin_user': {
      const email = p.admin.email.toLowerCase();
      const u = await s.db('users').where({ email }).first('id', 'tenant_id');
      if (u && u.tenant_id !== t) throw new Error(`${email} belongs to another tenant`);
      if (u) return { user_id: u.id, created: false };
      // A password nobody knows; the admin sets one through the reset mail sent now.
      const user = await s.accounts.createUser({ email, name: p.admin.name, role: 'admin', tenantId: t, password: crypto.randomBytes(24).toString('base64url') });
      s.accounts.requestReset(email);
      return { user_id: user.id, created: true, password: 'set through the reset mail sent to the admin' };
    }
    case 'create_api_keys': {
      const existing = new Set((await s.db('api_keys').where({ tenant_id: t }).whereNull('revoked_at').select('name')).map((r) => r.name));
      const made: string[] = [];
      for (const k of p.api_keys) {
        if (existing.has(k.name)) continue;
        const key = await s.billing.createApiKey({ tenantId: t, name: k.name, scopes: k.scopes, createdBy: actor });
        secrets[k.name] = key.key;
        made.push(key.id);
      }
      return { created: made, already_present: p.api_keys.filter((k) => existing.has(k.name)).map((k) => k.name) };
    }
    case 'set_kernel_quotas': {
      for (const [kernel, perDay] of Object.entries(p.kernel_quotas)) {
        await s.db('kernel_quotas').insert({ tenant_id: t, kernel, tasks_per_day: perDay, updated_at: s.clock.now().toISOString() }).onConflict(['tenant_id', 'kernel']).merge();
      }
      return { quotas: p.kernel_quotas };
    }
    case 'create_starter_workflows': {
      if (!p.starter_workflows.length) return { created: [] };
      if (!s.workflows) throw new Error('the workflows plugin is not loaded');
      // Made as the provisioning admin acting in the new tenant: checked as POST /workflows checks them.
      const as: Caller = { kind: 'user', id: actor, tenantId: t, role: 'admin' };
      const have = new Set((await s.workflows.find(as, { names: p.starter_workflows.map((w) => w.name) })).map((d) => d.name));
      const made: string[] = [];
      for (const w of p.starter_workflows) {
        if (have.has(w.name)) continue;
        made.push((await s.workflows.create(as, w.name, w.steps)).id);
      }
      return { created: made };
    }
  }
}

export function provisioningRoutes(route: RouteMaker<Deps>): RouteDef[] {
  return [
    route({
      method: 'post',
      path: '/commercial/provisioning/create',
      summary: 'Plan the provisioning of a customer (admins): tenant, plan, admin user, API keys, kernel quotas, starter workflows',
      access: 'admin',
      body: spec,
      response: planView,
      status: 201,
      errors: [422],
      handler: async ({ body, caller, services }) => {
        if (!services.config.plans[body.plan]) throw invalid(['body', 'plan'], `unknown plan; known: ${Object.keys(services.config.plans).join(', ')}`);
        for (const k of Object.keys(body.kernel_quotas)) if (!services.mesh.kernels().some((x) => x.id === k)) throw invalid(['body', 'kernel_quotas', k], 'unknown kernel');
        const now = services.clock.now().toISOString();
        const steps: Step[] = stepNames.map((name) => ({ name, state: 'pending', result: null, error: null, finished_at: null }));
        const row = { id: crypto.randomUUID(), tenant_id: body.tenant_id, state: 'draft', spec: JSON.stringify(body), steps: JSON.stringify(steps), runs: 0, created_by: caller!.id, created_at: now, updated_at: now };
        await services.db('provisioning_plans').insert(row);
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'create_provisioning_plan', target_type: 'provisioning_plan', target_id: row.id, result: 'succeeded', tenant_id: body.tenant_id });
        return toPlan(row);
      },
    }),
    route({
      method: 'post',
      path: '/commercial/provisioning/{plan_id}/execute',
      summary: "Run a provisioning plan step by step; each step's result is kept, a failed step stops the run, and running again is safe (done parts are skipped)",
      description: 'The secrets of API keys made by this run are in `api_key_secrets` of this answer only.',
      access: 'admin',
      params: z.object({ plan_id: z.uuid() }),
      response: planView.extend({ api_key_secrets: z.record(z.string(), z.string()) }),
      errors: [404, 409],
      handler: async ({ params, caller, services }) => {
        const row = await services.db('provisioning_plans').where({ id: params.plan_id }).first();
        if (!row) throw new NotFound('Provisioning plan not found');
        const now = () => services.clock.now().toISOString();
        const claimed = await services.db('provisioning_plans').where({ id: row.id }).whereNot('state', 'running').update({ state: 'running', updated_at: now() });
        if (!claimed) throw new StateConflict('running', [], 'The plan is being executed');
        const plan: Plan = toPlan(row);
        const secrets: Record<string, string> = {};
        let failed = false;
        for (const step of plan.steps as Step[]) {
          if (failed) {
            Object.assign(step, { state: 'pending', result: null, error: null, finished_at: null });
            continue;
          }
          try {
            step.result = await runStep(step.name, plan.spec, services, caller!.id, secrets);
            Object.assign(step, { state: 'succeeded', error: null, finished_at: now() });
          } catch (err) {
            failed = true;
            Object.assign(step, { state: 'failed', result: null, error: (err as Error).message, finished_at: now() });
          }
        }
        const state: 'failed' | 'succeeded' = failed ? 'failed' : 'succeeded';
        await services.db('provisioning_plans').where({ id: row.id }).update({ state, steps: JSON.stringify(plan.steps), runs: plan.runs + 1, updated_at: now() });
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'execute_provisioning_plan', target_type: 'provisioning_plan', target_id: row.id, result: failed ? 'failed' : 'succeeded', tenant_id: plan.spec.tenant_id });
        return { ...plan, state, runs: plan.runs + 1, updated_at: now(), api_key_secrets: secrets };
      },
    }),
  ];
}
