import crypto from 'node:crypto';
import { z } from 'zod';
import type { ActionLog } from '../../core/actions';
import type { Config } from '../../core/config';
import type { UsageMeter, PlanFeatures } from '../../core/contracts/usage';
import type { Db } from '../../core/db';
import { monthBounds, planTimeline } from './catalogue';
import type { Ledger } from './ledger';
import { bpsOf, money, moneySchema, priceOf, prorate } from './money';

export const invoiceLine = z.object({
  kind: z.enum(['plan', 'addon', 'usage', 'marketplace', 'tax']),
  description: z.string(),
  quantity: z.number(),
  unit: z.string(),
  unit_price: moneySchema.nullable(),
  per: z.number().int().nullable(),
  amount: moneySchema,
  /** Already in the ledger when it happened (marketplace runs); the rest is posted when the period closes. */
  posted_on_use: z.boolean(),
});

export const invoiceSchema = z.object({
  invoice_id: z.string().nullable(),
  tenant_id: z.string(),
  period: z.string(),
  period_start: z.string(),
  period_end: z.string(),
  state: z.enum(['open', 'closed']),
  currency: z.string(),
  lines: z.array(invoiceLine),
  subtotal: moneySchema,
  tax: moneySchema,
  total: moneySchema,
  transaction_id: z.string().nullable(),
  computed_at: z.string(),
  method: z.string(),
});
export type Invoice = z.infer<typeof invoiceSchema>;
type Line = z.infer<typeof invoiceLine> & { minor: number; revenue: string | null };

const METHOD =
  'plan fee and add-ons prorated by the time held in the period (ms); metered usage per hour priced at the plan held that hour ' +
  '(round half up per line); marketplace runs as charged in the ledger; tax = subtotal x tax rate; amounts in integer minor units';

/** Computes a tenant's invoice for a month; a past month is frozen (and posted) the first time it is asked for. */
export class Invoicer {
  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly ledger: Ledger,
    private readonly usage: UsageMeter,
    private readonly features: PlanFeatures,
    private readonly now: () => Date,
    private readonly actions: ActionLog,
  ) {}

  async invoice(tenantId: string, period: string): Promise<Invoice> {
    const frozen = await this.db('invoices').where({ tenant_id: tenantId, period }).first();
    if (frozen) return JSON.parse(frozen.document) as Invoice;
    const { end } = monthBounds(period);
    const now = this.now();
    const lines = await this.lines(tenantId, period, now < end ? now : end);
    if (now < end) return this.document(tenantId, period, lines, 'open', null, null, now);
    return this.close(tenantId, period, lines, now);
  }

  /** Freezes a past month: posts what the ledger does not hold yet, and keeps the document. */
  private async close(tenantId: string, period: string, lines: Line[], now: Date): Promise<Invoice> {
    const cur = this.config.billing.currency;
    const id = crypto.randomUUID();
    try {
      const doc = await this.db.transaction(async (trx) => {
        const unposted = lines.filter((l) => !l.posted_on_use && l.minor !== 0);
        let txnId: string | null = null;
        if (unposted.length) {
          const total = unposted.reduce((a, l) => a + l.minor, 0);
          const byAccount = new Map<string, number>();
          for (const l of unposted) byAccount.set(l.revenue!, (byAccount.get(l.revenue!) ?? 0) + l.minor);
          const txn = await this.ledger.post({
            tenantId, kind: 'invoice', currency: cur, amount: total, reference: { type: 'invoice', id }, memo: `Invoice ${period}`, detail: { period },
            entries: [{ account: `receivable:${tenantId}`, amount: total }, ...[...byAccount].map(([account, amount]) => ({ account, amount: -amount }))],
          }, trx);
          txnId = txn.id;
        }
        const doc = this.document(tenantId, period, lines, 'closed', id, txnId, now);
        await trx('invoices').insert({ id, tenant_id: tenantId, period, document: JSON.stringify(doc), transaction_id: txnId, created_at: now.toISOString() });
        return doc;
      });
      await this.actions.record({ source: 'automated', actor: 'billing', action: 'close_invoice', target_type: 'invoice', target_id: id, result: 'succeeded', tenant_id: tenantId, detail: { period, total: doc.total.amount, transaction_id: doc.transaction_id } });
      return doc;
    } catch (err) {
      // Another request closed it first: its document is the one.
      const frozen = await this.db('invoices').where({ tenant_id: tenantId, period }).first();
      if (frozen) return JSON.parse(frozen.document) as Invoice;
      throw err;
    }
  }

  private document(tenantId: string, period: string, lines: Line[], state: 'open' | 'closed', id: string | null, txnId: string | null, now: Date): Invoice {
    const b = this.config.billing;
    const fmt = (minor: number) => money(minor, b.currency, b.currencies);
    const { start, end } = monthBounds(period);
    const subtotal = lines.filter((l) => l.kind !== 'tax').reduce((a, l) => a + l.minor, 0);
    const tax = lines.filter((l) => l.kind === 'tax').reduce((a, l) => a + l.minor, 0);
    return {
      invoice_id: id, tenant_id: tenantId, period, period_start: start.toISOString(), period_end: end.toISOString(), state, currency: b.currency,
      lines: lines.map(({ minor: _m, revenue: _r, ...l }) => l),
      subtotal: fmt(subtotal), tax: fmt(tax), total: fmt(subtotal + tax), transaction_id: txnId, computed_at: now.toISOString(), method: METHOD,
    };
  }

  /** The invoice lines of [period start, upTo). */
  async lines(tenantId: string, period: string, upTo: Date): Promise<Line[]> {
    const b = this.config.billing;
    const fmt = (minor: number) => money(minor, b.currency, b.currencies);
    const { start, end } = monthBounds(period);
    const monthMs = end.getTime() - start.getTime();
    const from = start.toISOString();
    const to = upTo.toISOString();
    const out: Line[] = [];
    const segments = await planTimeline(this.db, tenantId, from, to);
    for (const s of segments) {
      const ms = Date.parse(s.to) - Date.parse(s.from);
      const fee = b.planPrices[s.plan] ?? 0;
      const whole = ms === monthMs;
      out.push({
        kind: 'plan', description: `Plan ${s.plan}${whole ? '' : ` (prorated ${s.from} to ${s.to})`}`, quantity: round6(ms / monthMs), unit: 'month',
        unit_price: fmt(fee), per: 1, amount: fmt(prorate(fee, ms, monthMs)), posted_on_use: false, minor: prorate(fee, ms, monthMs), revenue: 'revenue:plan',
      });
    }
    for (const a of await this.features.addonPeriods(tenantId, from, to)) {
      const price = b.addons[a.sku]?.price ?? 0;
      const aFrom = a.started_at > from ? a.started_at : from;
      const aTo = a.ended_at && a.ended_at < to ? a.ended_at : to;
      const ms = Math.max(0, Date.parse(aTo) - Date.parse(aFrom));
      const minor = prorate(price, ms, monthMs);
      out.push({ kind: 'addon', description: `Add-on ${a.sku} (${aFrom} to ${aTo})`, quantity: round6(ms / monthMs), unit: 'month', unit_price: fmt(price), per: 1, amount: fmt(minor), posted_on_use: false, minor, revenue: 'revenue:addons' });
    }
    // Usage: each hour priced at the plan held when that hour began.
    const planAt = (hourIso: string) => segments.find((s) => s.from <= hourIso && hourIso < s.to)?.plan ?? segments[0]?.plan;
    const qty = new Map<string, number>();
    if (segments.length) {
      for (const r of await this.usage.query({ tenantId, from, to, granularity: 'hour' })) {
        const plan = planAt(r.period < segments[0].from ? segments[0].from : r.period);
        if (!plan || !b.unitPrices[plan]?.[r.metric]) continue;
        const k = `${plan}\u0000${r.metric}`;
        qty.set(k, (qty.get(k) ?? 0) + r.quantity);
      }
    }
    for (const [k, q] of [...qty].sort()) {
      const [plan, metric] = k.split('\u0000');
      const price = b.unitPrices[plan][metric];
      const minor = priceOf(q, price);
      out.push({ kind: 'usage', description: `${metric} on plan ${plan}`, quantity: round6(q), unit: metric, unit_price: fmt(price.amount), per: price.per, amount: fmt(minor), posted_on_use: false, minor, revenue: 'revenue:usage' });
    }
    const charges: Array<{ reference_id: string; n: number | string; amount: number | string }> = await this.db('ledger_transactions')
      .where({ tenant_id: tenantId, kind: 'charge', currency: b.currency })
      .andWhere('created_at', '>=', from)
      .andWhere('created_at', '<', to)
      .groupBy('reference_id')
      .select('reference_id')
      .count({ n: '*' })
      .sum({ amount: 'amount' });
    const names = new Map((await this.db('marketplace_items').whereIn('id', charges.map((c) => c.reference_id as string)).select('id', 'name')).map((r) => [r.id, r.name]));
    for (const c of charges) {
      const minor = Number(c.amount);
      const n = Number(c.n);
      out.push({ kind: 'marketplace', description: `Marketplace runs of "${names.get(c.reference_id) ?? c.reference_id}" (${c.reference_id})`, quantity: n, unit: 'run', unit_price: null, per: null, amount: fmt(minor), posted_on_use: true, minor, revenue: null });
    }
    const subtotal = out.reduce((a, l) => a + l.minor, 0);
    if (b.taxRateBps > 0) {
      const minor = bpsOf(subtotal, b.taxRateBps);
      out.push({ kind: 'tax', description: `Tax ${b.taxRateBps / 100}% of ${fmt(subtotal).amount}`, quantity: 1, unit: 'invoice', unit_price: null, per: null, amount: fmt(minor), posted_on_use: false, minor, revenue: 'tax:payable' });
    }
    return out;
  }
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
