import { z } from 'zod';
import { NotFound } from '../../core/errors';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { namedTenantScope } from '../../core/tenancy';
import { daily, health, HEALTH_METHOD, signals, stage, STAGE_RULES } from './customer';
import { experimentView, latestExperiments } from './experiments';
import type { Deps } from './index';

const DAY = 86_400_000;
const tenantParams = z.object({ tenant_id: z.string().min(1).max(64) });
const signalsView = z.object({
  age_days: z.number().int(), plan: z.string(), activity_7d: z.number(), activity_prev_7d: z.number(), trend: z.number().nullable(), active_days_14d: z.number().int(),
  last_active_day: z.string().nullable(), error_rate_7d: z.number().nullable(), plan_or_addon_changes_30d: z.number().int(), kernels_used_30d: z.number().int(), kernels_available: z.number().int(),
});
const stageEnum = z.enum(['onboarding', 'active', 'expanding', 'at_risk', 'churned']);
const healthView = z.object({
  score: z.number(),
  components: z.object({ activity: z.number(), trend: z.number(), reliability: z.number(), adoption: z.number(), billing: z.number() }),
  owed: z.object({ amount: z.string(), currency: z.string() }),
});
const dailyView = z.object({ day: z.string(), requests: z.number(), request_errors: z.number(), kernel_tasks: z.number(), kernel_task_errors: z.number() });
const analysis = { method: z.string(), window: z.object({ from: z.string(), to: z.string() }), inputs: z.array(z.string()) };

/** The tenant, its signals and its daily use (the last 30 days). */
async function look(d: Deps, caller: Parameters<typeof namedTenantScope>[1], tenantId: string) {
  const scope = namedTenantScope(d.db, caller, tenantId);
  const t = await d.db('tenants').where({ id: scope.tenantId }).first('id', 'plan', 'created_at');
  if (!t) throw new NotFound('Tenant not found');
  const now = d.clock.now();
  const days = await daily(d.usage, t.id, now, 30);
  const s = await signals(d.db, d.usage, d.mesh, t, now, days);
  return { t, now, days, s, window: { from: new Date(Date.parse(days[0].day)).toISOString(), to: now.toISOString() } };
}

export function customerRoutes(route: RouteMaker<Deps>): RouteDef[] {
  return [
    route({
      method: 'get',
      path: '/customer/lifecycle/{tenant_id}',
      summary: "A tenant's lifecycle stage (onboarding, active, expanding, at risk, churned) from its activity, with the signals",
      access: 'viewer',
      params: tenantParams,
      response: z.object({ tenant_id: z.string(), stage: stageEnum, signals: signalsView, ...analysis }),
      errors: [404],
      handler: async ({ params, caller, services }) => {
        const { t, days, s, window } = await look(services, caller!, params.tenant_id);
        return { tenant_id: t.id, stage: stage(s, days), signals: s, method: STAGE_RULES, window, inputs: ['usage_counters', 'actions', 'tenants'] };
      },
    }),
    route({
      method: 'get',
      path: '/customer/success/{tenant_id}',
      summary: "A tenant's health score (0-100) with its components: activity, trend, reliability, adoption, billing",
      access: 'viewer',
      params: tenantParams,
      response: z.object({ tenant_id: z.string(), stage: stageEnum, health: healthView, signals: signalsView, ...analysis }),
      errors: [404],
      handler: async ({ params, caller, services }) => {
        const { t, now, days, s, window } = await look(services, caller!, params.tenant_id);
        return { tenant_id: t.id, stage: stage(s, days), health: await health(s, services.billing, t.id, now), signals: s, method: HEALTH_METHOD, window, inputs: ['usage_counters', 'ledger_entries', 'mesh kernels'] };
      },
    }),
    route({
      method: 'get',
      path: '/customer/{tenant_id}/success_dashboard',
      summary: 'The customer-success view of a tenant: health score and components, stage, daily use over 30 days, latest ROI experiments',
      access: 'viewer',
      params: tenantParams,
      response: z.object({ tenant_id: z.string(), stage: stageEnum, health: healthView, daily: z.array(dailyView), experiments: z.array(experimentView), ...analysis }),
      errors: [404],
      handler: async ({ params, caller, services }) => {
        const { t, now, days, s, window } = await look(services, caller!, params.tenant_id);
        return {
          tenant_id: t.id, stage: stage(s, days), health: await health(s, services.billing, t.id, now), daily: days, experiments: await latestExperiments(services, t.id),
          method: `${HEALTH_METHOD}; stage: ${STAGE_RULES}`, window, inputs: ['usage_counters', 'ledger_entries', 'roi_experiments'],
        };
      },
    }),
    route({
      method: 'get',
      path: '/customer/{tenant_id}/roi',
      summary: 'Value delivered against spend over a window: work the platform did for the tenant, what it paid, the cost per unit, and measured experiment gains',
      access: 'viewer',
      params: tenantParams,
      query: z.object({ days: z.coerce.number().int().min(1).max(365).default(30) }),
      response: z.object({
        tenant_id: z.string(), spend: z.object({ amount: z.string(), currency: z.string() }),
        delivered: z.object({ kernel_tasks: z.number(), kernel_task_errors: z.number(), kernel_cpu_ms: z.number(), requests: z.number(), public_runs: z.number(), llm_tokens: z.number() }),
        cost_per_1000_tasks: z.object({ amount: z.string(), currency: z.string() }).nullable(), experiments: z.array(experimentView), ...analysis,
      }),
      errors: [404, 422],
      handler: async ({ params, query, caller, services }) => {
        const scope = namedTenantScope(services.db, caller!, params.tenant_id);
        if (!(await services.db('tenants').where({ id: scope.tenantId }).first('id'))) throw new NotFound('Tenant not found');
        const now = services.clock.now();
        const window = { from: new Date(now.getTime() - query.days * DAY).toISOString(), to: now.toISOString() };
        const rows = await services.usage.query({ tenantId: scope.tenantId, metrics: ['kernel_tasks', 'kernel_task_errors', 'kernel_cpu_ms', 'requests', 'public_runs', 'llm_tokens'], ...window, granularity: 'total' });
        const sum = (m: string) => rows.filter((r) => r.metric === m).reduce((a, r) => a + r.quantity, 0);
        const delivered = { kernel_tasks: sum('kernel_tasks'), kernel_task_errors: sum('kernel_task_errors'), kernel_cpu_ms: Math.round(sum('kernel_cpu_ms') * 1000) / 1000, requests: sum('requests'), public_runs: sum('public_runs'), llm_tokens: sum('llm_tokens') };
        const spend = await services.billing.spend(scope.tenantId, window.from, window.to);
        const good = delivered.kernel_tasks - delivered.kernel_task_errors;
        const per = good > 0 ? services.billing.format(Math.round((spend.minor * 1000) / good)) : null;
        return {
          tenant_id: scope.tenantId, spend: { amount: spend.amount, currency: spend.currency }, delivered, cost_per_1000_tasks: per ? { amount: per.amount, currency: per.currency } : null,
          experiments: await latestExperiments(services, scope.tenantId),
          method: 'delivered: metered work in the window; spend: ledger charges and closed invoices plus the open month accrued; cost per 1000 successful tasks = spend x 1000 / successful tasks',
          window, inputs: ['usage_counters', 'telemetry_events', 'ledger_entries', 'roi_experiments'],
        };
      },
    }),
  ];
}
