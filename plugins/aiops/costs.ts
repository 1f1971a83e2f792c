// Spend: explicit cost records plus the cost telemetry's llm-call events carry; budgets with
// thresholds; alerts when spend, or its linear forecast to the period's end, crosses one.
import crypto from 'node:crypto';
import type { Db } from '../../core/db';
import type { EventBus } from '../../core/events';
import { floatToMicros, fromMicros } from '../../core/money';

export const GROUPS = ['model', 'tenant', 'provider', 'day'] as const;
export type Group = (typeof GROUPS)[number];

export interface Budget {
  id: string;
  tenant_id: string;
  name: string;
  period: 'day' | 'month';
  amount_micros: number;
  currency: string;
  model: string | null;
  provider: string | null;
  thresholds: number[];
}

export function toBudget(r: Record<string, any>): Budget {
  return { ...r, amount_micros: Number(r.amount_micros), model: r.model ?? null, provider: r.provider ?? null, thresholds: JSON.parse(r.thresholds) } as Budget;
}

export function budgetView(b: Budget & { created_by: string; created_at: string }) {
  const { amount_micros, ...rest } = b;
  return { ...rest, amount: fromMicros(amount_micros) };
}

const COLS: Record<'records' | 'telemetry', Record<Group, string>> = {
  records: { model: 'model', tenant: 'tenant_id', provider: 'provider', day: 'substr(occurred_at, 1, 10)' },
  telemetry: { model: 'model', tenant: 'tenant_id', provider: 'provider', day: 'substr(ts, 1, 10)' },
};

interface Filter {
  tenantId: string | null;
  since: string;
  until: string;
  model?: string | null;
  provider?: string | null;
}

/** Sums of both sources grouped by `groups` and currency (telemetry costs are USD). */
export async function spend(db: Db, f: Filter, groups: Group[]) {
  const rec = db('aiops_costs').where('occurred_at', '>=', f.since).andWhere('occurred_at', '<', f.until);
  const tel = db('telemetry_events').where('type', 'llm-call').andWhere('ts', '>=', f.since).andWhere('ts', '<', f.until).whereNotNull('cost_usd');
  for (const [q, tenantCol] of [[rec, 'tenant_id'], [tel, 'tenant_id']] as const) {
    if (f.tenantId) q.where(tenantCol, f.tenantId);
    if (f.model) q.where('model', f.model);
    if (f.provider) q.where('provider', f.provider);
  }
  const sel = (src: 'records' | 'telemetry') => groups.map((g, i) => `${COLS[src][g]} AS g${i}`);
  const by = (src: 'records' | 'telemetry') => groups.map((g) => COLS[src][g]);
  const recRows: Array<Record<string, unknown>> = await rec.select(db.raw([...sel('records'), 'currency', 'SUM(amount_micros) AS micros', 'COUNT(*) AS n'].join(', '))).groupBy([...by('records'), 'currency'].map((c) => db.raw(c)));
  const telRows: Array<Record<string, unknown>> = await tel.select(db.raw([...sel('telemetry'), 'SUM(cost_usd) AS usd', 'COUNT(*) AS n'].join(', '))).modify((q) => {
    if (groups.length) q.groupBy(by('telemetry').map((c) => db.raw(c)));
  });
  const out = new Map<string, { key: Record<string, string | null>; currency: string; micros: number; records: number; llm_calls: number }>();
  const add = (r: Record<string, unknown>, currency: string, micros: number, records: number, calls: number) => {
    const key = Object.fromEntries(groups.map((g, i) => [g, r[`g${i}`] === null || r[`g${i}`] === undefined ? null : String(r[`g${i}`])]));
    const id = JSON.stringify([key, currency]);
    const cur = out.get(id) ?? { key, currency, micros: 0, records: 0, llm_calls: 0 };
    cur.micros += micros;
    cur.records += records;
    cur.llm_calls += calls;
    out.set(id, cur);
  };
  for (const r of recRows) add(r, String(r.currency), Number(r.micros), Number(r.n), 0);
  for (const r of telRows) add(r, 'USD', floatToMicros(Number(r.usd)), 0, Number(r.n));
  return [...out.values()].sort((a, b) => b.micros - a.micros);
}

/** Start and end of the budget period holding `now` (UTC days and months). */
export function periodOf(period: 'day' | 'month', now: Date): { start: Date; end: Date } {
  if (period === 'day') {
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    return { start, end: new Date(start.getTime() + 86_400_000) };
  }
  return { start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)) };
}

/**
 * Checks every budget (of one tenant, or all): spend so far in its period and its forecast
 * (spend / elapsed share of the period, a straight-line projection). Each threshold crossed by
 * spend raises an `actual` alert, each crossed only by the forecast a `forecast` alert, once
 * per period; new alerts are published as `cost_alert` (alert subscriptions relay them).
 */
export async function evaluateBudgets(db: Db, events: EventBus, now: Date, tenantId: string | null): Promise<number> {
  const q = db('aiops_budgets');
  if (tenantId) q.where('tenant_id', tenantId);
  let raised = 0;
  for (const b of (await q).map(toBudget)) {
    const { start, end } = periodOf(b.period, now);
    const rows = await spend(db, { tenantId: b.tenant_id, since: start.toISOString(), until: end.toISOString(), model: b.model, provider: b.provider }, []);
    const micros = rows.filter((r) => r.currency === b.currency).reduce((a, r) => a + r.micros, 0);
    const elapsed = Math.max((now.getTime() - start.getTime()) / (end.getTime() - start.getTime()), 1e-6);
    const forecast = Math.round(micros / Math.min(1, elapsed));
    for (const t of b.thresholds) {
      const limit = b.amount_micros * t;
      const kind = micros >= limit ? 'actual' : forecast >= limit ? 'forecast' : null;
      if (!kind) continue;
      const alert = { id: crypto.randomUUID(), tenant_id: b.tenant_id, budget_id: b.id, kind, threshold: t, period_start: start.toISOString(), spend_micros: micros, forecast_micros: forecast, budget_micros: b.amount_micros, currency: b.currency, created_at: now.toISOString() };
      const exists = await db('aiops_cost_alerts').where({ budget_id: b.id, period_start: alert.period_start, threshold: t }).whereIn('kind', kind === 'forecast' ? ['forecast', 'actual'] : ['actual']).first();
      if (exists) continue;
      try {
        await db('aiops_cost_alerts').insert(alert);
      } catch {
        continue; // raised at the same moment by another check: the unique index kept one
      }
      raised++;
      events.publish('cost_alert', { ...alertView(alert), budget_name: b.name });
    }
  }
  return raised;
}

export function alertView(r: Record<string, any>) {
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    budget_id: r.budget_id,
    kind: r.kind,
    threshold: Number(r.threshold),
    period_start: r.period_start,
    spend: fromMicros(Number(r.spend_micros)),
    forecast: fromMicros(Number(r.forecast_micros)),
    budget: fromMicros(Number(r.budget_micros)),
    currency: r.currency,
    created_at: r.created_at,
  };
}
