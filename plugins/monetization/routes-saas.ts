import { z } from 'zod';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { monthBounds, monthOf } from './catalogue';
import type { Deps } from './index';
import { money, moneySchema } from './money';
import { costs, mrrAt, mrrByTenant, revenue } from './reports';
import { svc, tenantMonth } from './shared';

const DAY = 86_400_000;
const analysis = { method: z.string(), window: z.object({ from: z.string(), to: z.string() }), inputs: z.array(z.string()) };

function ratio(a: number, b: number): number | null {
  return b > 0 ? Math.round((a / b) * 1e4) / 1e4 : null;
}

export function saasRoutes(route: RouteMaker<Deps>): RouteDef[] {
  return [
    route({
      method: 'get',
      path: '/monetization/v1/public/kpis',
      summary: 'Public aggregate figures of the marketplace over the last 30 days: runs, success rate, p95 run time, published items',
      access: 'public',
      response: z.object({ runs: z.number().int(), succeeded: z.number().int(), success_rate: z.number().nullable(), p95_run_ms: z.number().nullable(), published_items: z.number().int(), ...analysis }),
      errors: [503],
      handler: async ({ services }) => {
        const now = services.clock.now();
        const from = new Date(now.getTime() - 30 * DAY).toISOString();
        const window = { from, to: now.toISOString() };
        // The newest 100,000 runs at most: the percentile is taken on a kernel, not here.
        const runs = await services.db('marketplace_runs').where('created_at', '>=', from).orderBy('created_at', 'desc').limit(100_000).select('state', 'duration_ms');
        const ok = runs.filter((r) => r.state === 'succeeded').length;
        let p95: number | null = null;
        if (runs.length) {
          const out = (await services.mesh.run('analytics', 'percentiles', { values: runs.map((r) => Number(r.duration_ms)), percentiles: [95] })) as { percentiles: Array<{ value: number }> };
          p95 = Math.round(out.percentiles[0].value * 1000) / 1000;
        }
        const items = await services.db('marketplace_items').where({ state: 'published' }).count({ n: '*' });
        return {
          runs: runs.length, succeeded: ok, success_rate: ratio(ok, runs.length), p95_run_ms: p95, published_items: Number(items[0]?.n ?? 0),
          method: 'counts of public runs in the window; p95 by linear interpolation between closest ranks (analytics kernel, task percentiles)', window, inputs: ['marketplace_runs', 'marketplace_items'],
        };
      },
    }),
    route({
      method: 'get',
      path: '/saas/dashboard/{tenant_id}',
      summary: "A tenant's subscription: plan, add-ons, features with overrides, recurring revenue, this month's usage and cost, users and keys",
      access: 'viewer',
      params: z.object({ tenant_id: z.string().min(1).max(64) }),
      response: z.object({
        tenant_id: z.string(), plan: z.string(), addons: z.array(z.string()), features: z.record(z.string(), z.boolean()), overrides: z.record(z.string(), z.boolean()), mrr: moneySchema,
        month: z.object({ period: z.string(), invoice_total: moneySchema, cost: moneySchema, requests: z.number(), kernel_tasks: z.number(), error_rate: z.number().nullable() }),
        users: z.number().int(), api_keys: z.number().int(), published_items: z.number().int(),
      }),
      errors: [404],
      handler: async ({ params, caller, services }) => {
        const { s, scope, ent, now, period } = await tenantMonth(services, caller!, params.tenant_id);
        const from = monthBounds(period).start.toISOString();
        const fmt = (m: number) => money(m, s.config.billing.currency, s.config.billing.currencies);
        const totals = async (metric: 'requests' | 'request_errors' | 'kernel_tasks') => (await s.usage.totals(metric, from, now.toISOString(), scope.tenantId)).get(scope.tenantId) ?? 0;
        const requests = await totals('requests');
        const count = async (table: string, where: Record<string, unknown> = {}) => Number((await scope.select(table).where(where).count({ n: '*' }))[0]?.n ?? 0);
        return {
          tenant_id: scope.tenantId, plan: ent.plan, addons: ent.addons, features: ent.features, overrides: ent.overrides, mrr: fmt(await mrrAt(services.db, s.config, scope.tenantId, now.toISOString())),
          month: {
            period, invoice_total: (await s.invoicer.invoice(scope.tenantId, period)).total, cost: fmt((await costs(s, scope.tenantId, from, now.toISOString())).reduce((a, l) => a + l.minor, 0)),
            requests, kernel_tasks: await totals('kernel_tasks'), error_rate: ratio(await totals('request_errors'), requests),
          },
          users: await count('users'), api_keys: await count('api_keys', { revoked_at: null }), published_items: await count('marketplace_items', { state: 'published' }),
        };
      },
    }),
    route({
      method: 'get',
      path: '/investor/report',
      summary: 'Recurring revenue and its movement (admins): MRR, ARR, growth, churn, net revenue retention, gross margin',
      access: 'admin',
      query: z.object({ months: z.coerce.number().int().min(1).max(24).default(6) }),
      response: z.object({
        currency: z.string(), mrr: moneySchema, arr: moneySchema, paying_tenants: z.number().int(),
        months: z.array(z.object({ month: z.string(), mrr: moneySchema, growth: z.number().nullable(), logo_churn: z.number().nullable(), net_revenue_retention: z.number().nullable() })),
        revenue_30d: moneySchema, cost_30d: moneySchema, gross_margin_30d: z.number().nullable(), ...analysis,
      }),
      errors: [422],
      handler: async ({ query, services }) => {
        const s = svc(services);
        const now = services.clock.now();
        const fmt = (m: number) => money(m, s.config.billing.currency, s.config.billing.currencies);
        const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
        const current = await mrrByTenant(services.db, s.config, now.toISOString());
        const months = [];
        // Month ends from the oldest asked for up to now; each compared with the one before.
        const ends: string[] = [];
        for (let i = query.months; i >= 1; i--) ends.push(monthBounds(monthOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i + 1, 1)))).start.toISOString());
        ends.push(now.toISOString());
        let prev = await mrrByTenant(services.db, s.config, new Date(Date.parse(ends[0]) - 1).toISOString());
        for (let i = 1; i < ends.length; i++) {
          const cur = i === ends.length - 1 ? current : await mrrByTenant(services.db, s.config, new Date(Date.parse(ends[i]) - 1).toISOString());
          const payingBefore = [...prev].filter(([, v]) => v > 0);
          const churned = payingBefore.filter(([id]) => !((cur.get(id) ?? 0) > 0)).length;
          const retained = payingBefore.reduce((a, [id]) => a + (cur.get(id) ?? 0), 0);
          const before = sum(prev);
          months.push({ month: ends[i - 1].slice(0, 7), mrr: fmt(sum(cur)), growth: ratio(sum(cur) - before, before), logo_churn: ratio(churned, payingBefore.length), net_revenue_retention: ratio(retained, payingBefore.reduce((a, [, v]) => a + v, 0)) });
          prev = cur;
        }
        const from30 = new Date(now.getTime() - 30 * DAY).toISOString();
        const rev = await revenue(s, from30, now.toISOString());
        let cost = 0;
        for (const id of current.keys()) cost += (await costs(s, id, from30, now.toISOString())).reduce((a, l) => a + l.minor, 0);
        const mrr = sum(current);
        return {
          currency: s.config.billing.currency, mrr: fmt(mrr), arr: fmt(mrr * 12), paying_tenants: [...current.values()].filter((v) => v > 0).length, months,
          revenue_30d: fmt(rev.total), cost_30d: fmt(cost), gross_margin_30d: rev.total > 0 ? ratio(rev.total - cost, rev.total) : null,
          method: 'MRR = plan fee + add-on fees of each tenant at the moment (plan history from the action log); growth = MRR change / previous MRR; logo churn = paying tenants that stopped paying / paying at the start; NRR = their MRR now / their MRR then; gross margin = (ledger revenue - metered cost) / ledger revenue',
          window: { from: ends[0], to: now.toISOString() }, inputs: ['tenants', 'actions', 'tenant_addons', 'ledger_entries', 'usage_counters', 'billing.planPrices'],
        };
      },
    }),
  ];
}
