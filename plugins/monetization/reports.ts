import type { Config } from '../../core/config';
import type { Db } from '../../core/db';
import { planTimeline } from './catalogue';
import type { BillingService } from './service';
import { priceOf } from './money';

const MONTH_MS = 30 * 86_400_000;

/** Revenue credited in the window per account and per tenant (credits are negative entries). */
export async function revenue(s: BillingService, from: string, to: string, tenantId?: string) {
  const cur = s.config.billing.currency;
  const rows = await s.ledger.sums({ prefix: 'revenue:', from, to, currency: cur, tenantId });
  const byKind: Record<string, number> = {};
  for (const r of rows) byKind[r.account.slice('revenue:'.length)] = -r.amount;
  const perTenant: Array<{ tenant_id: string; amount: number | string }> = await s.db('ledger_entries').whereRaw("substr(account, 1, 8) = 'revenue:'").andWhere({ currency: cur }).andWhere('created_at', '>=', from).andWhere('created_at', '<', to).modify((q) => (tenantId ? q.where('tenant_id', tenantId) : q)).groupBy('tenant_id').select('tenant_id').sum({ amount: 'amount' });
  const cash = await s.ledger.sums({ prefix: 'cash:', from, to, currency: cur, tenantId });
  const payments: Array<{ amount: number | string | null; n: number | string }> = await s.db('ledger_transactions').where({ kind: 'payment', currency: cur }).andWhere('created_at', '>=', from).andWhere('created_at', '<', to).modify((q) => (tenantId ? q.where('tenant_id', tenantId) : q)).sum({ amount: 'amount' }).count({ n: '*' });
  const refunds: Array<{ amount: number | string | null; n: number | string }> = await s.db('ledger_transactions').where({ kind: 'refund', currency: cur }).andWhere('created_at', '>=', from).andWhere('created_at', '<', to).modify((q) => (tenantId ? q.where('tenant_id', tenantId) : q)).sum({ amount: 'amount' }).count({ n: '*' });
  const payable = await s.ledger.sums({ prefix: 'payable:', from, to, currency: cur });
  const tax = await s.ledger.sums({ account: 'tax:payable', from, to, currency: cur, tenantId });
  return {
    total: Object.values(byKind).reduce((a, b) => a + b, 0),
    byKind,
    byTenant: Object.fromEntries(perTenant.map((r) => [r.tenant_id as string, -Number(r.amount)])),
    paymentsReceived: Number(payments[0]?.amount ?? 0),
    paymentsCount: Number(payments[0]?.n ?? 0),
    refunded: Number(refunds[0]?.amount ?? 0),
    refundsCount: Number(refunds[0]?.n ?? 0),
    cashNet: cash.reduce((a, r) => a + r.amount, 0),
    publisherPayable: -payable.reduce((a, r) => a + r.amount, 0),
    taxCollected: -(tax[0]?.amount ?? 0),
  };
}

export interface CostLine {
  resource: string;
  dimension: string;
  quantity: number;
  unit_cost: { amount: number; per: number };
  minor: number;
}

/**
 * What serving a tenant cost in the window: metered kernel CPU time and LLM tokens at the
 * configured unit costs, and storage (measured now) per GiB-month for the window's share of a month.
 */
export async function costs(s: BillingService, tenantId: string, from: string, to: string): Promise<CostLine[]> {
  const uc = s.config.billing.unitCosts;
  const out: CostLine[] = [];
  const rows = await s.usage.query({ tenantId, metrics: ['kernel_cpu_ms', 'llm_tokens'], from, to, granularity: 'total' });
  for (const r of rows) {
    const price = uc[r.metric];
    if (!price) continue;
    out.push({ resource: r.metric, dimension: r.dimension, quantity: r.quantity, unit_cost: price, minor: priceOf(r.quantity, price) });
  }
  const sp = uc.storage_bytes;
  if (sp) {
    const bytes = await s.usage.storageBytes(tenantId);
    const share = (Date.parse(to) - Date.parse(from)) / MONTH_MS;
    out.push({ resource: 'storage_bytes', dimension: `${Math.round(share * 1e4) / 1e4} month`, quantity: bytes, unit_cost: sp, minor: priceOf(bytes * share, sp) });
  }
  return out;
}

/** Monthly recurring revenue of a tenant at a moment: its plan's fee plus its add-ons', minor units. */
export async function mrrAt(db: Db, config: Config, tenantId: string, at: string): Promise<number> {
  const end = new Date(Date.parse(at) + 1).toISOString();
  const seg = await planTimeline(db, tenantId, at, end);
  if (!seg.length) return 0;
  let mrr = config.billing.planPrices[seg[0].plan] ?? 0;
  const addons = await db('tenant_addons').where({ tenant_id: tenantId }).andWhere('started_at', '<=', at).andWhere((w) => w.whereNull('ended_at').orWhere('ended_at', '>', at)).select('sku');
  for (const a of addons) mrr += config.billing.addons[a.sku]?.price ?? 0;
  return mrr;
}

/** MRR per tenant at a moment, for every tenant that existed then. */
export async function mrrByTenant(db: Db, config: Config, at: string): Promise<Map<string, number>> {
  const tenants = await db('tenants').where('created_at', '<=', at).select('id');
  const out = new Map<string, number>();
  for (const t of tenants) out.set(t.id, await mrrAt(db, config, t.id, at));
  return out;
}
