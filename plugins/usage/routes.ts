import { z } from 'zod';
import { METRICS } from '../../core/contracts/usage';
import { invalid, NotFound } from '../../core/errors';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { namedTenantScope } from '../../core/tenancy';
import type { Deps } from './index';

const tenantParams = z.object({ tenant_id: z.string().min(1).max(64) });

const entitlements = z.object({
  tenant_id: z.string(),
  plan: z.string(),
  features: z.record(z.string(), z.boolean()),
  from_plan: z.array(z.string()),
  from_addons: z.array(z.string()),
  overrides: z.record(z.string(), z.boolean()),
  addons: z.array(z.string()),
});

const usageRow = z.object({
  period: z.string(),
  tenant_id: z.string(),
  key_id: z.string().nullable(),
  metric: z.enum(METRICS),
  dimension: z.string(),
  quantity: z.number(),
});

const DAY = 86_400_000;

export function usageRoutes(route: RouteMaker<Deps>): RouteDef[] {
  return [
    route({
      method: 'post',
      path: '/saas/features/{tenant_id}/toggle',
      summary: "Override one feature of a tenant (admins): on, off, or back to what its plan and add-ons give (null)",
      description: 'The override wins over the plan either way and shows in GET /tenant/features/{tenant_id}; routes that declare the feature answer 403 PLAN_FEATURE without it.',
      access: 'admin',
      params: tenantParams,
      body: z.strictObject({ feature: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a feature name'), enabled: z.boolean().nullable() }),
      response: entitlements.extend({ feature: z.string(), enabled: z.boolean(), previous: z.boolean() }),
      errors: [404, 422],
      handler: async ({ params, body, caller, services }) => {
        const before = await services.features.entitlements(params.tenant_id);
        if (!before) throw new NotFound('Tenant not found');
        const after = await services.features.setOverride(params.tenant_id, body.feature, body.enabled, caller!.id);
        await services.actions.record({
          source: 'manual', actor: caller!.id, action: 'toggle_feature', target_type: 'tenant', target_id: params.tenant_id, result: 'succeeded', tenant_id: params.tenant_id,
          detail: { feature: body.feature, override: body.enabled, previous: before.features[body.feature] ?? false, now: after.features[body.feature] ?? false },
        });
        return { ...after, feature: body.feature, enabled: after.features[body.feature] ?? false, previous: before.features[body.feature] ?? false };
      },
    }),
    route({
      method: 'get',
      path: '/usage/{tenant_id}',
      summary: "Metered usage of a tenant by hour, day or in total (beyond the spec): requests by route group, kernel tasks and CPU time, telemetry events, LLM tokens",
      description: 'Windows are whole UTC hours. `key_id` narrows to one API key (telemetry is per tenant and then left out). storage_bytes is measured at the time of the call.',
      access: 'viewer',
      params: tenantParams,
      query: z.object({
        from: z.iso.datetime().optional(),
        to: z.iso.datetime().optional(),
        granularity: z.enum(['hour', 'day', 'total']).default('day'),
        metric: z.enum(METRICS).optional(),
        key_id: z.uuid().optional(),
      }),
      response: z.object({ tenant_id: z.string(), from: z.string(), to: z.string(), granularity: z.string(), usage: z.array(usageRow), storage_bytes: z.number().int() }),
      errors: [404, 422],
      handler: async ({ params, query, caller, services }) => {
        const scope = namedTenantScope(services.db, caller!, params.tenant_id);
        if (!(await services.db('tenants').where({ id: scope.tenantId }).first('id'))) throw new NotFound('Tenant not found');
        const to = query.to ?? services.clock.now().toISOString();
        const from = query.from ?? new Date(Date.parse(to) - 30 * DAY).toISOString();
        if (from >= to) throw invalid(['query', 'from'], 'from must be before to');
        if (Date.parse(to) - Date.parse(from) > 400 * DAY) throw invalid(['query', 'from'], 'a window of at most 400 days');
        const usage = await services.usage.query({ tenantId: scope.tenantId, keyId: query.key_id, metrics: query.metric ? [query.metric] : undefined, from, to, granularity: query.granularity });
        return { tenant_id: scope.tenantId, from, to, granularity: query.granularity, usage, storage_bytes: await services.usage.storageBytes(scope.tenantId) };
      },
    }),
  ];
}
