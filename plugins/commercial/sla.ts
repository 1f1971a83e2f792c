import { z } from 'zod';
import { invalid, NotFound } from '../../core/errors';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { namedTenantScope } from '../../core/tenancy';
import type { Deps } from './index';
import { incidentsOf, median, serviceLevel } from './measures';

const amount = z.object({ amount: z.string(), currency: z.string() });
const tier = z.object({ below: z.number().gt(0).max(1), credit_percent: z.number().gt(0).max(100) });
export const slaBody = z.strictObject({
  tenant_id: z.string().min(1).max(64),
  availability: z.number().gt(0).lt(1),
  latency_p95_ms: z.number().positive().max(600_000),
  support_response_minutes: z.number().positive().max(100_000),
  /** Credit tiers: availability below `below` earns `credit_percent` of the month's plan fee (the largest tier that applies). */
  credits: z.array(tier).max(10).optional(),
  /** Credit when the measured p95 latency is over target. */
  latency_credit_percent: z.number().min(0).max(100).default(0),
});
const slaView = z.object({
  tenant_id: z.string(), availability: z.number(), latency_p95_ms: z.number(), support_response_minutes: z.number(), credits: z.array(tier), latency_credit_percent: z.number(),
  created_at: z.string(), updated_at: z.string(), updated_by: z.string(),
});

function toSla(r: Record<string, any>) {
  return {
    tenant_id: r.tenant_id, availability: Number(r.availability), latency_p95_ms: Number(r.latency_p95_ms), support_response_minutes: Number(r.support_response_minutes),
    credits: JSON.parse(r.credits), latency_credit_percent: Number(r.latency_credit_percent), created_at: r.created_at, updated_at: r.updated_at, updated_by: r.updated_by,
  };
}

function monthWindow(period: string, now: Date) {
  const [y, m] = period.split('-').map(Number);
  const start = new Date(Date.UTC(y, m - 1, 1));
  const end = new Date(Date.UTC(y, m, 1));
  return { from: start.toISOString(), to: (end < now ? end : now).toISOString() };
}

export function slaRoutes(route: RouteMaker<Deps>): RouteDef[] {
  return [
    route({
      method: 'post',
      path: '/sla/define',
      summary: "Define (or replace) a tenant's service-level agreement (admins): availability, p95 latency and support response targets, and the credit rule",
      description: 'Default credits when none are given: below the target 10%, below target - 0.5 points 25%, below target - 5 points 50% of the plan fee.',
      access: 'admin',
      body: slaBody,
      response: slaView,
      status: 201,
      errors: [404, 422],
      handler: async ({ body, caller, services }) => {
        if (!(await services.db('tenants').where({ id: body.tenant_id }).first('id'))) throw new NotFound('Tenant not found');
        const credits = body.credits ?? [
          { below: body.availability, credit_percent: 10 },
          { below: Math.max(0.0001, body.availability - 0.005), credit_percent: 25 },
          { below: Math.max(0.0001, body.availability - 0.05), credit_percent: 50 },
        ];
        if (credits.some((c) => c.below > body.availability)) throw invalid(['body', 'credits'], 'a credit tier cannot start above the availability target');
        const now = services.clock.now().toISOString();
        const prior = await services.db('sla_definitions').where({ tenant_id: body.tenant_id }).first('created_at');
        const row = {
          tenant_id: body.tenant_id, availability: body.availability, latency_p95_ms: body.latency_p95_ms, support_response_minutes: body.support_response_minutes,
          credits: JSON.stringify(credits), latency_credit_percent: body.latency_credit_percent, created_at: prior?.created_at ?? now, updated_at: now, updated_by: caller!.id,
        };
        await services.db('sla_definitions').insert(row).onConflict('tenant_id').merge();
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'define_sla', target_type: 'tenant', target_id: body.tenant_id, result: 'succeeded', tenant_id: body.tenant_id, detail: { availability: body.availability, latency_p95_ms: body.latency_p95_ms } });
        return toSla(row);
      },
    }),
    route({
      method: 'get',
      path: '/sla/report/{tenant_id}',
      summary: "A month measured against the tenant's SLA: availability of its requests and tasks, p95 latency, incident response, and the credit owed",
      access: 'viewer',
      feature: 'sla',
      params: z.object({ tenant_id: z.string().min(1).max(64) }),
      query: z.object({ period: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'a month, YYYY-MM').optional() }),
      response: z.object({
        tenant_id: z.string(), period: z.string(), sla: slaView,
        measured: z.object({ availability: z.number().nullable(), latency_p95_ms: z.number().nullable(), support_response_minutes: z.number().nullable(), requests: z.number(), request_errors: z.number(), kernel_tasks: z.number(), kernel_task_errors: z.number(), incidents: z.number().int() }),
        met: z.object({ availability: z.boolean().nullable(), latency_p95_ms: z.boolean().nullable(), support_response_minutes: z.boolean().nullable() }),
        credit_percent: z.number(), plan_fee: amount, credit: amount,
        method: z.string(), window: z.object({ from: z.string(), to: z.string() }), inputs: z.array(z.string()),
      }),
      errors: [403, 404, 422],
      handler: async ({ params, query, caller, services }) => {
        const scope = namedTenantScope(services.db, caller!, params.tenant_id);
        const def = await services.db('sla_definitions').where({ tenant_id: scope.tenantId }).first();
        if (!def) throw new NotFound('No SLA is defined for this tenant', 'NO_SLA');
        const sla = toSla(def);
        const now = services.clock.now();
        const period = query.period ?? now.toISOString().slice(0, 7);
        const w = monthWindow(period, now);
        if (w.from >= w.to) throw invalid(['query', 'period'], 'a month that has begun');
        const level = await serviceLevel(services.usage, scope.tenantId, w.from, w.to);
        const inc = await incidentsOf(services.incidents, scope.tenantId, w.from, w.to);
        const response = median(inc.response_minutes);
        const met = {
          availability: level.availability === null ? null : level.availability >= sla.availability,
          latency_p95_ms: level.latency_p95_ms === null ? null : level.latency_p95_ms <= sla.latency_p95_ms,
          support_response_minutes: response === null ? null : response <= sla.support_response_minutes,
        };
        let creditPercent = 0;
        if (level.availability !== null) for (const t of sla.credits) if (level.availability < t.below) creditPercent = Math.max(creditPercent, t.credit_percent);
        if (met.latency_p95_ms === false) creditPercent = Math.min(100, creditPercent + sla.latency_credit_percent);
        const invoice = await services.billing.invoiceTotal(scope.tenantId, period);
        // Whole hundredths of a percent, so the credit stays integer arithmetic.
        const credit = Math.round((invoice.plan_fee_minor * Math.round(creditPercent * 100)) / 10_000);
        const fmt = (m: number) => { const a = services.billing.format(m); return { amount: a.amount, currency: a.currency }; };
        return {
          tenant_id: scope.tenantId, period, sla,
          measured: { availability: level.availability, latency_p95_ms: level.latency_p95_ms, support_response_minutes: response, requests: level.requests, request_errors: level.request_errors, kernel_tasks: level.kernel_tasks, kernel_task_errors: level.kernel_task_errors, incidents: inc.opened },
          met, credit_percent: creditPercent, plan_fee: fmt(invoice.plan_fee_minor), credit: fmt(credit),
          method: 'availability = (requests + kernel tasks - 5xx answers - failed tasks) / (requests + kernel tasks); p95 latency = upper bound of the histogram bucket holding the 95th percentile request; support response = median minutes from an incident opening to the first manual entry; credit = largest tier below which availability fell (+ latency credit when p95 is over) x the month\'s plan fee',
          window: w, inputs: ['usage_counters', 'incidents', 'incident_timeline', 'invoice plan lines'],
        };
      },
    }),
  ];
}
