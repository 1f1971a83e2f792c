import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import type { Config } from '../../core/config';
import { Conflict, invalid, NotFound } from '../../core/errors';
import type { Entry, Ledger, Txn } from './ledger';
import { money, parseAmount } from './money';

export const refundBody = z.strictObject({
  transaction_id: z.uuid(),
  /** Absent: all that is still refundable. */
  amount: z.union([z.number(), z.string().max(40)]).optional(),
  reason: z.string().trim().min(1).max(500),
});
export type RefundBody = z.infer<typeof refundBody>;

/** What a refundable transaction has been paid and refunded, minor units. */
export interface Refundable {
  paid: number;
  refunded: number;
  remaining: number;
}

/**
 * A charge or closed invoice is paid as far as the tenant's payments cover it, oldest debit
 * first: paid = clamp(payments − debits before it, 0, its amount). Refunds do not unpay it.
 */
async function refundable(db: Knex, t: Txn): Promise<Refundable> {
  const sum = async (q: Knex.QueryBuilder) => Number(((await q.sum({ s: 'amount' })) as Array<{ s: unknown }>)[0]?.s ?? 0);
  const payments = await sum(db('ledger_transactions').where({ tenant_id: t.tenant_id, currency: t.currency, kind: 'payment' }));
  const before = await sum(
    db('ledger_transactions').where({ tenant_id: t.tenant_id, currency: t.currency }).whereIn('kind', ['charge', 'invoice'])
      .andWhere((q) => q.where('created_at', '<', t.created_at).orWhere((q2) => q2.where('created_at', t.created_at).andWhere('id', '<', t.id))),
  );
  const refunded = await sum(db('ledger_transactions').where({ kind: 'refund', reference_type: 'transaction', reference_id: t.id }));
  const paid = Math.max(0, Math.min(t.amount, payments - before));
  return { paid, refunded, remaining: Math.max(0, paid - refunded) };
}

/**
 * The entries of refunding `amount` of `t`: each account the charge credited (revenue,
 * publisher payable, tax) is debited its share (largest remainder), and the money leaves
 * through the cash account it came in by. The receivable does not move: what was paid stays paid.
 */
function reversal(t: Txn, amount: number): Entry[] {
  const credits = t.entries.filter((e) => e.amount < 0 && !e.account.startsWith('receivable:'));
  const total = credits.reduce((a, e) => a - e.amount, 0);
  const shares = credits.map((e) => ({ account: e.account, exact: (amount * -e.amount) / total }));
  const out = shares.map((s) => ({ account: s.account, amount: Math.floor(s.exact) }));
  let left = amount - out.reduce((a, e) => a + e.amount, 0);
  const order = shares.map((s, i) => ({ i, frac: s.exact - Math.floor(s.exact) })).sort((a, b) => b.frac - a.frac || a.i - b.i);
  for (const { i } of order) if (left-- > 0) out[i]!.amount += 1;
  return [...out, { account: 'cash:local', amount: -amount }];
}

/**
 * Refunds a paid charge or closed invoice once per Idempotency-Key (a retry answers the first
 * refund; another refund under a used key is 409). The check of what is refundable and the
 * posting are one database transaction, the refunded row locked (PostgreSQL), so two refunds at
 * once cannot together exceed what was paid.
 */
export async function processRefund(ledger: Ledger, config: Config, original: Txn, b: RefundBody, key: string | null, actor: string): Promise<{ txn: Txn; replayed: boolean; state: Refundable }> {
  if (original.kind !== 'charge' && original.kind !== 'invoice') throw new Conflict(`A ${original.kind} transaction cannot be refunded: only charges and closed invoices`, 'NOT_REFUNDABLE');
  const decimals = config.billing.currencies[original.currency] ?? 2;
  const minor = b.amount === undefined ? null : parseAmount(b.amount, decimals, ['body', 'amount']);
  if (minor !== null && minor <= 0) throw invalid(['body', 'amount'], 'must be greater than zero');
  const hash = crypto.createHash('sha256').update(JSON.stringify(['refund', original.id, minor, b.reason])).digest('hex');
  const fmt = (m: number) => money(m, original.currency, config.billing.currencies).amount;
  const replay = async () => {
    const first = key ? await ledger.byIdempotencyKey(original.tenant_id, key) : null;
    if (!first) return null;
    if (first.request_hash !== hash) throw new Conflict('This Idempotency-Key was used for another request', 'IDEMPOTENCY_KEY_REUSED');
    return first;
  };
  const seen = await replay();
  if (seen) return { txn: seen, replayed: true, state: await refundable(ledger.db, original) };
  try {
    return await ledger.db.transaction(async (trx) => {
      await trx('ledger_transactions').where({ id: original.id }).forUpdate().first('id');
      const s = await refundable(trx, original);
      const amount = minor ?? s.remaining;
      if (s.remaining === 0) throw new Conflict(`Nothing to refund: paid ${fmt(s.paid)}, refunded ${fmt(s.refunded)} of ${fmt(original.amount)} ${original.currency}`, 'NOTHING_REFUNDABLE', { paid: fmt(s.paid), refunded: fmt(s.refunded) });
      if (amount > s.remaining) throw new Conflict(`The refund exceeds what was paid: at most ${fmt(s.remaining)} ${original.currency} (paid ${fmt(s.paid)}, refunded ${fmt(s.refunded)})`, 'REFUND_EXCEEDS_PAID', { refundable: fmt(s.remaining) });
      const txn = await ledger.post({
        tenantId: original.tenant_id, kind: 'refund', currency: original.currency, amount, reference: { type: 'transaction', id: original.id },
        memo: `Refund of ${original.memo}`, detail: { reason: b.reason, refunded_kind: original.kind, by: actor }, entries: reversal(original, amount), idempotencyKey: key, requestHash: hash,
      }, trx);
      return { txn, replayed: false, state: { paid: s.paid, refunded: s.refunded + amount, remaining: s.remaining - amount } };
    });
  } catch (err) {
    // The same key twice at once: the unique index let one in; the other answers its result.
    const again = err instanceof Conflict ? null : await replay();
    if (again) return { txn: again, replayed: true, state: await refundable(ledger.db, original) };
    throw err;
  }
}

export async function refundTarget(ledger: Ledger, id: string, tenantId: string | null): Promise<Txn> {
  const t = await ledger.get(id);
  if (!t || (tenantId !== null && t.tenant_id !== tenantId)) throw new NotFound('Transaction not found');
  return t;
}
