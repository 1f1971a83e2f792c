import crypto from 'node:crypto';
import { z } from 'zod';
import { pageOf } from '../../core/pagination';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { tenantScope } from '../../core/tenancy';
import { alertView, budgetView, evaluateBudgets, GROUPS, spend, toBudget, type Group } from './costs';
import { windowOf, DAY_MS, type Deps } from './deps';
import { idempotencyKey } from '../../core/window';
import { fromMicros, toMicros } from '../../core/money';
import { alert, budget, budgetBody, cost, costBody, method, page, windowQuery } from './schemas';
import { invalid } from '../../core/errors';

const costView = (r: Record<string, any>) => ({
  id: r.id,
  tenant_id: r.tenant_id,
  provider: r.provider,
  model: r.model ?? null,
  amount: fromMicros(Number(r.amount_micros)),
  currency: r.currency,
  input_tokens: r.input_tokens === null || r.input_tokens === undefined ? null : Number(r.input_tokens),
  output_tokens: r.output_tokens === null || r.output_tokens === undefined ? null : Number(r.output_tokens),
  description: r.description ?? null,
  occurred_at: r.occurred_at,
  created_by: r.created_by,
  created_at: r.created_at,
});

export function costRoutes(route: RouteMaker<Deps>): RouteDef<Deps>[] {
  return [
    route({
      method: 'post',
      path: '/costs/record',
      summary: 'Record a cost (besides what llm-call telemetry carries); amounts as numbers or decimal strings, at most 6 decimals',
      description: 'With an Idempotency-Key header a retried record is stored once; the retry gets the first answer.',
      access: 'member',
      feature: 'aiops',
      body: costBody,
      response: cost,
      status: 201,
      errors: [422],
      handler: async ({ body, caller, services, req }) => {
        const key = idempotencyKey(req.headers);
        const prior = async () => (key ? services.db('aiops_costs').where({ tenant_id: caller!.tenantId, idempotency_key: key }).first() : undefined);
        const first = await prior();
        if (first) return costView(first);
        const now = services.clock.now();
        const row = {
          id: crypto.randomUUID(),
          provider: body.provider,
          model: body.model ?? null,
          amount_micros: toMicros(body.amount, ['body', 'amount']),
          currency: body.currency,
          input_tokens: body.input_tokens ?? null,
          output_tokens: body.output_tokens ?? null,
          description: body.description ?? null,
          idempotency_key: key ?? null,
          occurred_at: body.occurred_at ? new Date(body.occurred_at).toISOString() : now.toISOString(),
          created_by: caller!.id,
          created_at: now.toISOString(),
        };
        try {
          await tenantScope(services.db, caller!).insert('aiops_costs', row);
        } catch (err) {
          // The same key at the same moment: the unique index kept the first.
          const raced = await prior();
          if (raced) return costView(raced);
          throw err;
        }
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'record_cost', target_type: 'cost', target_id: row.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: { amount: fromMicros(row.amount_micros), currency: row.currency } });
        await evaluateBudgets(services.db, services.events, now, caller!.tenantId);
        return costView({ ...row, tenant_id: caller!.tenantId });
      },
    }),
    route({
      method: 'get',
      path: '/costs/summary',
      summary: 'Spend grouped by model, tenant, provider and/or day (default model) over a window (default 30 days), per currency',
      description: 'Sums recorded costs and the cost_usd of ingested llm-call events. Grouping by tenant spans every tenant for admins; others see their own.',
      access: 'viewer',
      feature: 'aiops',
      query: z.object({ group_by: z.string().max(64).optional(), ...windowQuery }),
      response: z.object({
        group_by: z.array(z.enum(GROUPS)),
        totals: z.array(z.object({ currency: z.string(), amount: z.string() })),
        groups: z.array(z.object({ key: z.record(z.string(), z.string().nullable()), currency: z.string(), amount: z.string(), records: z.number(), llm_calls: z.number() })),
        ...method,
      }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const groups = (query.group_by ?? 'model').split(',').map((s) => s.trim()).filter(Boolean) as Group[];
        const bad = groups.filter((g) => !GROUPS.includes(g));
        if (bad.length || !groups.length) throw invalid(['query', 'group_by'], `unknown group ${bad.join(', ')}; allowed: ${GROUPS.join(', ')}`);
        const w = windowOf(query, services.clock, 30 * DAY_MS);
        const allTenants = caller!.role === 'admin' && groups.includes('tenant');
        const rows = await spend(services.db, { tenantId: allTenants ? null : caller!.tenantId, ...w }, [...new Set(groups)]);
        const totals = new Map<string, number>();
        for (const r of rows) totals.set(r.currency, (totals.get(r.currency) ?? 0) + r.micros);
        return {
          group_by: [...new Set(groups)],
          totals: [...totals].map(([currency, m]) => ({ currency, amount: fromMicros(m) })),
          groups: rows.map((r) => ({ key: r.key, currency: r.currency, amount: fromMicros(r.micros), records: r.records, llm_calls: r.llm_calls })),
          method: 'sum of recorded costs and of llm-call cost_usd, grouped in the database',
          window: w,
          inputs: ['aiops cost records', 'telemetry llm-call events'],
        };
      },
    }),
    route({
      method: 'post',
      path: '/costs/budgets',
      summary: 'Create a budget for a day or month (optionally one model or provider) with alert thresholds as shares of the amount',
      access: 'member',
      feature: 'aiops',
      body: budgetBody,
      response: budget,
      status: 201,
      errors: [422],
      handler: async ({ body, caller, services }) => {
        const micros = toMicros(body.amount, ['body', 'amount']);
        if (micros <= 0) throw invalid(['body', 'amount'], 'a budget must be greater than zero');
        const row = {
          id: crypto.randomUUID(),
          name: body.name,
          period: body.period,
          amount_micros: micros,
          currency: body.currency,
          model: body.model ?? null,
          provider: body.provider ?? null,
          thresholds: JSON.stringify([...new Set(body.thresholds)].sort((a, b) => a - b)),
          created_by: caller!.id,
          created_at: services.clock.now().toISOString(),
        };
        await tenantScope(services.db, caller!).insert('aiops_budgets', row);
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'create_budget', target_type: 'budget', target_id: row.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: { amount: fromMicros(micros), currency: row.currency, period: row.period } });
        await evaluateBudgets(services.db, services.events, services.clock.now(), caller!.tenantId);
        return budgetView({ ...toBudget({ ...row, tenant_id: caller!.tenantId }), created_by: row.created_by, created_at: row.created_at });
      },
    }),
    route({
      method: 'get',
      path: '/costs/alerts',
      summary: "The tenant's cost alerts, newest first: budgets whose spend (actual) or straight-line forecast (forecast) crossed a threshold",
      description: 'Budgets are checked when a cost is recorded, a budget created, and when this list is read.',
      access: 'viewer',
      feature: 'aiops',
      query: z.object({ budget_id: z.uuid().optional(), ...page }),
      response: z.object({ alerts: z.array(alert), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        await evaluateBudgets(services.db, services.events, services.clock.now(), caller!.tenantId);
        const q = tenantScope(services.db, caller!).select('aiops_cost_alerts');
        if (query.budget_id) q.where('budget_id', query.budget_id);
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        return { alerts: items.map(alertView), next_cursor };
      },
    }),
  ];
}
