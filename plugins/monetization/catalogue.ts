import { z } from 'zod';
import type { Config } from '../../core/config';
import type { Db } from '../../core/db';
import { money, moneySchema } from './money';

export const skuSchema = z.object({
  sku: z.string(),
  kind: z.enum(['plan', 'addon']),
  name: z.string(),
  summary: z.string(),
  monthly_price: moneySchema,
  features: z.array(z.string()),
  requests_per_minute: z.number().int().nullable(),
  unit_prices: z.array(z.object({ metric: z.string(), price: moneySchema, per: z.number().int() })),
});
export type Sku = z.infer<typeof skuSchema>;

/** Each plan and add-on of the configuration as a SKU with its price. */
export function skus(config: Config): Sku[] {
  const b = config.billing;
  const fmt = (minor: number) => money(minor, b.currency, b.currencies);
  const plans: Sku[] = Object.entries(config.plans).map(([name, p]) => ({
    sku: `plan:${name}`,
    kind: 'plan',
    name,
    summary: `The ${name} plan: ${p.requestsPerMinute} requests a minute`,
    monthly_price: fmt(b.planPrices[name] ?? 0),
    features: [...p.features].sort(),
    requests_per_minute: p.requestsPerMinute,
    unit_prices: Object.entries(b.unitPrices[name] ?? {}).map(([metric, u]) => ({ metric, price: fmt(u.amount), per: u.per })),
  }));
  const addons: Sku[] = Object.entries(b.addons).map(([name, a]) => ({
    sku: `addon:${name}`, kind: 'addon', name, summary: a.summary, monthly_price: fmt(a.price), features: [...a.features].sort(), requests_per_minute: null, unit_prices: [],
  }));
  return [...plans, ...addons];
}

/** Start and end (exclusive) of a `YYYY-MM` month, UTC. */
export function monthBounds(period: string): { start: Date; end: Date } {
  const [y, m] = period.split('-').map(Number);
  return { start: new Date(Date.UTC(y, m - 1, 1)), end: new Date(Date.UTC(y, m, 1)) };
}

export function monthOf(d: Date): string {
  return d.toISOString().slice(0, 7);
}

export interface PlanSegment {
  plan: string;
  from: string;
  to: string;
}

/**
 * Which plan a tenant had over [from, to): its current plan, walked back through the plan
 * changes the action log holds (tenant creation, assign-plan, subscribe), from its creation on.
 */
export async function planTimeline(db: Db, tenantId: string, from: string, to: string): Promise<PlanSegment[]> {
  const t = await db('tenants').where({ id: tenantId }).first('plan', 'created_at');
  if (!t) return [];
  const start = t.created_at > from ? t.created_at : from;
  if (start >= to) return [];
  const changes = await db('actions')
    .where({ target_type: 'tenant', target_id: tenantId })
    .whereIn('action', ['assign_plan', 'subscribe_plan'])
    .andWhere('result', 'succeeded')
    .andWhere('created_at', '>=', start)
    .orderBy([{ column: 'created_at', order: 'asc' }, { column: 'id', order: 'asc' }])
    .select('created_at', 'detail');
  const parsed = changes.map((c) => ({ at: c.created_at as string, ...(JSON.parse(c.detail) as { from: string; to: string }) }));
  // The plan at `start` is what the first later change changed from; with no change, today's plan.
  let plan = parsed[0]?.from ?? t.plan;
  let cursor = start;
  const out: PlanSegment[] = [];
  for (const c of parsed) {
    if (c.at >= to) break;
    if (c.at > cursor) out.push({ plan, from: cursor, to: c.at });
    plan = c.to;
    cursor = c.at > cursor ? c.at : cursor;
  }
  out.push({ plan, from: cursor, to });
  return out.filter((s) => s.from < s.to);
}
