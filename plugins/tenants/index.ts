import crypto from 'node:crypto';
import { z } from 'zod';
import type { Config } from '../../core/config';
import { nowIso } from '../../core/db';
import { Conflict, invalid, NotFound } from '../../core/errors';
import { definePlugin } from '../../core/plugin';
import { featuresRef } from '../../core/contracts/usage';
import { core } from '../../core/services';
import { namedTenantScope } from '../../core/tenancy';

interface TenantRow {
  id: string;
  name: string;
  plan: string;
  domains: string;
  created_at: string;
}

const tenantId = z.string().regex(/^[a-z0-9][a-z0-9-]{2,63}$/, '3 to 64 characters: lowercase letters, digits and dashes, not starting with a dash');
const planName = z.string().min(1).max(32);
const tenantView = z.object({
  tenant_id: z.string(),
  name: z.string(),
  plan: z.string(),
  domains: z.array(z.string()),
  created_at: z.string(),
  rate_limit: z.object({ requests_per_minute: z.number().int(), window_seconds: z.number().int() }),
});

function rateLimit(config: Config, plan: string) {
  const p = config.plans[plan] ?? config.plans.free;
  return { requests_per_minute: p.requestsPerMinute, window_seconds: config.limits.windowSeconds };
}

function view(config: Config, t: TenantRow) {
  return { tenant_id: t.id, name: t.name, plan: t.plan, domains: JSON.parse(t.domains) as string[], created_at: t.created_at, rate_limit: rateLimit(config, t.plan) };
}

function checkPlan(config: Config, plan: string): void {
  if (!config.plans[plan]) throw invalid(['body', 'plan'], `Unknown plan "${plan}"; known: ${Object.keys(config.plans).join(', ')}`);
}

export default definePlugin({
  id: 'tenants',
  prefix: '',
  // features: plan, add-on and override entitlements (plugin usage), the same the route gate reads.
  deps: { db: core.db, config: core.config, limits: core.limits, actions: core.actions, features: featuresRef },
  routes: (route) => [
    route({
      method: 'get',
      path: '/tenant/current',
      summary: "The caller's tenant, its plan and request budget",
      access: 'viewer',
      response: tenantView,
      errors: [404],
      handler: async ({ caller, services }) => {
        const t = await services.db<TenantRow>('tenants').where({ id: caller!.tenantId }).first();
        if (!t) throw new NotFound('Tenant not found');
        return view(services.config, t);
      },
    }),
    route({
      method: 'post',
      path: '/tenant/create',
      summary: 'Create a tenant (admins only)',
      description: 'tenant_id is generated (a UUID) unless given; a taken one answers 409. domains: the domains the tenant uses, stored as given.',
      access: 'admin',
      body: z.object({
        name: z.string().trim().min(1).max(200),
        plan: planName.default('free'),
        domains: z.array(z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,252}$/, 'a lowercase domain name')).max(100).default([]),
        tenant_id: tenantId.optional(),
      }),
      response: tenantView,
      status: 201,
      errors: [409],
      handler: async ({ body, caller, services }) => {
        checkPlan(services.config, body.plan);
        const id = body.tenant_id ?? crypto.randomUUID();
        if (await services.db('tenants').where({ id }).first('id')) throw new Conflict(`Tenant "${id}" already exists`);
        const row: TenantRow = { id, name: body.name, plan: body.plan, domains: JSON.stringify([...new Set(body.domains)]), created_at: nowIso() };
        try {
          await services.db('tenants').insert(row);
        } catch (err) {
          if (await services.db('tenants').where({ id }).first('id')) throw new Conflict(`Tenant "${id}" already exists`);
          throw err;
        }
        await services.actions.record({
          source: 'manual', actor: caller!.id, action: 'create_tenant', target_type: 'tenant', target_id: id, result: 'succeeded', tenant_id: id, detail: { plan: body.plan },
        });
        return view(services.config, row);
      },
    }),
    route({
      method: 'post',
      path: '/billing/assign-plan',
      summary: "Change a tenant's plan (admins only); the new request budget applies at once",
      access: 'admin',
      body: z.object({ tenant_id: z.string().min(1).max(64), plan: planName }),
      response: tenantView.extend({ previous_plan: z.string() }),
      errors: [404],
      handler: async ({ body, caller, services }) => {
        checkPlan(services.config, body.plan);
        const t = await services.db<TenantRow>('tenants').where({ id: body.tenant_id }).first();
        if (!t) throw new NotFound('Tenant not found');
        await services.db('tenants').where({ id: t.id }).update({ plan: body.plan });
        services.limits.planChanged(t.id);
        services.features.planChanged(t.id);
        await services.actions.record({
          source: 'manual', actor: caller!.id, action: 'assign_plan', target_type: 'tenant', target_id: t.id, result: 'succeeded', tenant_id: t.id,
          detail: { from: t.plan, to: body.plan },
        });
        return { ...view(services.config, { ...t, plan: body.plan }), previous_plan: t.plan };
      },
    }),
    route({
      method: 'get',
      path: '/tenant/features/{tenant_id}',
      summary: "What a tenant may use: its plan's features, its add-ons' and admin overrides (one's own tenant; any tenant for admins)",
      access: 'viewer',
      params: z.object({ tenant_id: z.string().min(1).max(64) }),
      response: z.object({
        tenant_id: z.string(),
        plan: z.string(),
        features: z.record(z.string(), z.boolean()),
        enabled: z.array(z.string()),
        from_plan: z.array(z.string()),
        from_addons: z.array(z.string()),
        addons: z.array(z.string()),
        /** Set by POST /saas/features/{tenant_id}/toggle; they win over plan and add-ons. */
        overrides: z.record(z.string(), z.boolean()),
        rate_limit: tenantView.shape.rate_limit,
      }),
      errors: [404],
      handler: async ({ params, caller, services }) => {
        const scope = namedTenantScope(services.db, caller!, params.tenant_id);
        const e = await services.features.entitlements(scope.tenantId);
        if (!e) throw new NotFound('Tenant not found');
        return {
          tenant_id: e.tenant_id,
          plan: e.plan,
          features: e.features,
          enabled: Object.keys(e.features).filter((f) => e.features[f]).sort(),
          from_plan: e.from_plan,
          from_addons: e.from_addons,
          addons: e.addons,
          overrides: e.overrides,
          rate_limit: rateLimit(services.config, e.plan),
        };
      },
    }),
  ],
});
