import { z } from 'zod';
import { invalid } from '../../core/errors';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { namedTenantScope } from '../../core/tenancy';
import { monthBounds, monthOf } from './catalogue';
import type { Deps } from './index';
import { invoiceSchema } from './invoice';
import { money, moneySchema } from './money';
import { costs, revenue } from './reports';
import { svc, tenantMonth, tenantMustExist } from './shared';

const DAY = 86_400_000;
const tenantParams = z.object({ tenant_id: z.string().min(1).max(64) });
export const windowQuery = { from: z.iso.datetime().optional(), to: z.iso.datetime().optional() };
const windowView = z.object({ from: z.string(), to: z.string() });
const analysis = { method: z.string(), window: windowView, inputs: z.array(z.string()) };

/** The window a report looks at: the query's, or the last 30 days. */
export function windowOf(q: { from?: string; to?: string }, now: Date) {
  const to = q.to ?? now.toISOString();
  const from = q.from ?? new Date(Date.parse(to) - 30 * DAY).toISOString();
  if (from >= to) throw invalid(['query', 'from'], 'from must be before to');
  return { from, to };
}

const costLine = z.object({ resource: z.string(), dimension: z.string(), quantity: z.number(), unit_cost: moneySchema, per: z.number().int(), cost: moneySchema });

export function reportRoutes(route: RouteMaker<Deps>): RouteDef[] {
  return [
    route({
      method: 'get',
      path: '/monetization/revenue/summary',
      summary: 'Revenue from the ledger over a window (admins): by kind and tenant, payments received, publisher payable, tax',
      access: 'admin',
      query: z.object(windowQuery),
      response: z.object({ currency: z.string(), total: moneySchema, by_kind: z.record(z.string(), moneySchema), by_tenant: z.record(z.string(), moneySchema), payments_received: moneySchema, payments: z.number().int(), refunded: moneySchema, refunds: z.number().int(), publisher_payable: moneySchema, tax_collected: moneySchema, ...analysis }),
      errors: [422],
      handler: async ({ query, services }) => {
        const s = svc(services);
        const w = windowOf(query, services.clock.now());
        const r = await revenue(s, w.from, w.to);
        const fmt = (m: number) => money(m, s.config.billing.currency, s.config.billing.currencies);
        const map = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, fmt(v)]));
        return {
          currency: s.config.billing.currency, total: fmt(r.total), by_kind: map(r.byKind), by_tenant: map(r.byTenant), payments_received: fmt(r.paymentsReceived), payments: r.paymentsCount, refunded: fmt(r.refunded), refunds: r.refundsCount,
          publisher_payable: fmt(r.publisherPayable), tax_collected: fmt(r.taxCollected),
          method: 'sum of credits less debits (refunds) to revenue:* ledger accounts in the window (plan, usage and add-on revenue is posted when a month is invoiced; marketplace runs when they run)',
          window: w, inputs: ['ledger_entries', 'ledger_transactions'],
        };
      },
    }),
    route({
      method: 'get',
      path: '/monetization/profitability/summary',
      summary: 'Revenue against cost per tenant over a window (admins): cost from metered kernel CPU time, LLM tokens and storage at the configured unit costs',
      access: 'admin',
      query: z.object(windowQuery),
      response: z.object({ currency: z.string(), revenue: moneySchema, cost: moneySchema, margin: moneySchema, gross_margin: z.number().nullable(), tenants: z.array(z.object({ tenant_id: z.string(), revenue: moneySchema, cost: moneySchema, margin: moneySchema })), ...analysis }),
      errors: [422],
      handler: async ({ query, services }) => {
        const s = svc(services);
        const w = windowOf(query, services.clock.now());
        const fmt = (m: number) => money(m, s.config.billing.currency, s.config.billing.currencies);
        const r = await revenue(s, w.from, w.to);
        const tenants = (await services.db('tenants').select('id').orderBy('id')).map((t) => t.id as string);
        const rows = [];
        let cost = 0;
        for (const id of tenants) {
          const c = (await costs(s, id, w.from, w.to)).reduce((a, l) => a + l.minor, 0);
          const rev = r.byTenant[id] ?? 0;
          cost += c;
          rows.push({ tenant_id: id, revenue: fmt(rev), cost: fmt(c), margin: fmt(rev - c) });
        }
        return {
          currency: s.config.billing.currency, revenue: fmt(r.total), cost: fmt(cost), margin: fmt(r.total - cost), gross_margin: r.total > 0 ? Math.round(((r.total - cost) / r.total) * 1e4) / 1e4 : null, tenants: rows,
          method: 'revenue: ledger revenue credits; cost: metered quantity x configured unit cost (billing.unitCosts), storage measured now x window share of a month; gross margin = (revenue - cost) / revenue',
          window: w, inputs: ['ledger_entries', 'usage_counters', 'telemetry_events', 'billing.unitCosts'],
        };
      },
    }),
    route({
      method: 'get',
      path: '/monetization/dashboard/cost-breakdown',
      summary: "What serving a tenant cost, by resource and kernel or model (the caller's tenant; admins name any with tenant_id)",
      access: 'viewer',
      query: z.object({ tenant_id: z.string().min(1).max(64).optional(), ...windowQuery }),
      response: z.object({ tenant_id: z.string(), currency: z.string(), total: moneySchema, lines: z.array(costLine), ...analysis }),
      errors: [404, 422],
      handler: async ({ query, caller, services }) => {
        const s = svc(services);
        const scope = namedTenantScope(services.db, caller!, query.tenant_id ?? caller!.tenantId);
        await tenantMustExist(services.db, scope.tenantId);
        const w = windowOf(query, services.clock.now());
        const fmt = (m: number) => money(m, s.config.billing.currency, s.config.billing.currencies);
        const lines = await costs(s, scope.tenantId, w.from, w.to);
        return {
          tenant_id: scope.tenantId, currency: s.config.billing.currency, total: fmt(lines.reduce((a, l) => a + l.minor, 0)),
          lines: lines.map((l) => ({ resource: l.resource, dimension: l.dimension, quantity: l.quantity, unit_cost: fmt(l.unit_cost.amount), per: l.unit_cost.per, cost: fmt(l.minor) })),
          method: 'metered quantity x configured unit cost, rounded half up per line', window: w, inputs: ['usage_counters', 'telemetry_events', 'billing.unitCosts'],
        };
      },
    }),
    route({
      method: 'get',
      path: '/monetization/dashboard/billing/{tenant_id}',
      summary: "A tenant's billing at a glance: plan, balance owed, this month's invoice so far, payments, refunds and usage",
      access: 'viewer',
      params: tenantParams,
      response: z.object({
        tenant_id: z.string(), plan: z.string(), addons: z.array(z.string()), balance: moneySchema, current_invoice: z.object({ period: z.string(), subtotal: moneySchema, total: moneySchema, lines: z.number().int() }),
        payments_30d: z.object({ count: z.number().int(), amount: moneySchema }), refunds_30d: z.object({ count: z.number().int(), amount: moneySchema }), usage_month: z.record(z.string(), z.number()), active_api_keys: z.number().int(),
      }),
      errors: [404],
      handler: async ({ params, caller, services }) => {
        const { s, scope, ent, now, period } = await tenantMonth(services, caller!, params.tenant_id);
        const inv = await s.invoicer.invoice(scope.tenantId, period);
        const since = new Date(now.getTime() - 30 * DAY).toISOString();
        const of = async (kind: string) => {
          const r = await services.db('ledger_transactions').where({ tenant_id: scope.tenantId, kind, currency: s.config.billing.currency }).andWhere('created_at', '>=', since).count({ n: '*' }).sum({ a: 'amount' });
          return { count: Number(r[0]?.n ?? 0), amount: money(Number(r[0]?.a ?? 0), s.config.billing.currency, s.config.billing.currencies) };
        };
        const usage: Record<string, number> = {};
        for (const r of await s.usage.query({ tenantId: scope.tenantId, from: monthBounds(period).start.toISOString(), to: now.toISOString(), granularity: 'total' })) {
          if (r.metric !== 'request_latency') usage[r.metric] = (usage[r.metric] ?? 0) + r.quantity;
        }
        const keys = await scope.select('api_keys').whereNull('revoked_at').andWhere((w) => w.whereNull('expires_at').orWhere('expires_at', '>', now.toISOString())).count({ n: '*' });
        return {
          tenant_id: scope.tenantId, plan: ent.plan, addons: ent.addons, balance: money((await s.balance(scope.tenantId)).minor, s.config.billing.currency, s.config.billing.currencies), current_invoice: { period, subtotal: inv.subtotal, total: inv.total, lines: inv.lines.length },
          payments_30d: await of('payment'), refunds_30d: await of('refund'), usage_month: usage, active_api_keys: Number(keys[0]?.n ?? 0),
        };
      },
    }),
    route({
      method: 'get',
      path: '/billing/invoice/{tenant_id}',
      summary: "A tenant's invoice for a month: plan fee, add-ons and proration, metered usage at the plan's unit prices, marketplace runs, tax; lines sum exactly",
      description: 'period: YYYY-MM (default: this month, state open, computed up to now). A past month is closed: frozen and posted to the ledger the first time it is asked for, and never changes after.',
      access: 'viewer',
      params: tenantParams,
      query: z.object({ period: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'a month, YYYY-MM').optional() }),
      response: invoiceSchema,
      errors: [404, 422],
      handler: async ({ params, query, caller, services }) => {
        const scope = namedTenantScope(services.db, caller!, params.tenant_id);
        await tenantMustExist(services.db, scope.tenantId);
        const now = services.clock.now();
        const period = query.period ?? monthOf(now);
        if (monthBounds(period).start > now) throw invalid(['query', 'period'], 'a month that has begun');
        return svc(services).invoicer.invoice(scope.tenantId, period);
      },
    }),
  ];
}
