import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../../core/db';

/**
 * A double-entry ledger. Every transaction is a set of entries whose signed amounts (debit +,
 * credit -, integer minor units) sum to zero per currency; it is written in one database
 * transaction or not at all. Accounts (docs/groups/billing.md):
 *   receivable:<tenant>   what a tenant owes (charges debit it, payments credit it)
 *   cash:<provider>       money received through a payment provider
 *   revenue:<kind>        the platform's income: plan, usage, addons, marketplace, tax is separate
 *   tax:payable           tax collected on invoices
 *   payable:<tenant>      what the platform owes a marketplace publisher
 *   expense:payment_fees  provider fees
 * A refund debits what its charge credited and credits the cash it leaves by (refunds.ts).
 */
export const TXN_KINDS = ['payment', 'charge', 'invoice', 'refund'] as const;
export type TxnKind = (typeof TXN_KINDS)[number];

export interface Entry {
  account: string;
  amount: number;
}

export interface NewTxn {
  tenantId: string;
  kind: TxnKind;
  currency: string;
  /** The headline amount (what was paid or charged), minor units. */
  amount: number;
  reference: { type: string; id: string } | null;
  memo: string;
  detail?: Record<string, unknown>;
  entries: Entry[];
  idempotencyKey?: string | null;
  requestHash?: string | null;
}

export interface Txn {
  id: string;
  tenant_id: string;
  kind: TxnKind;
  currency: string;
  amount: number;
  reference_type: string | null;
  reference_id: string | null;
  memo: string;
  detail: Record<string, unknown>;
  idempotency_key: string | null;
  request_hash: string | null;
  created_at: string;
  entries: Entry[];
}

export class UnbalancedError extends Error {}

export class Ledger {
  constructor(
    readonly db: Db,
    private readonly now: () => Date,
  ) {}

  /** Writes a balanced transaction; `trx` joins a caller's database transaction. */
  async post(t: NewTxn, trx?: Knex.Transaction): Promise<Txn> {
    const sum = t.entries.reduce((a, e) => a + e.amount, 0);
    if (sum !== 0 || t.entries.some((e) => !Number.isSafeInteger(e.amount))) throw new UnbalancedError(`entries of "${t.memo}" sum to ${sum}, not 0`);
    const entries = t.entries.filter((e) => e.amount !== 0);
    const txn: Txn = {
      id: crypto.randomUUID(),
      tenant_id: t.tenantId,
      kind: t.kind,
      currency: t.currency,
      amount: t.amount,
      reference_type: t.reference?.type ?? null,
      reference_id: t.reference?.id ?? null,
      memo: t.memo,
      detail: t.detail ?? {},
      idempotency_key: t.idempotencyKey ?? null,
      request_hash: t.requestHash ?? null,
      created_at: this.now().toISOString(),
      entries,
    };
    const write = async (x: Knex.Transaction) => {
      const { entries: _e, ...row } = txn;
      await x('ledger_transactions').insert({ ...row, detail: JSON.stringify(row.detail) });
      if (entries.length) {
        await x('ledger_entries').insert(entries.map((e) => ({ transaction_id: txn.id, tenant_id: t.tenantId, account: e.account, amount: e.amount, currency: t.currency, created_at: txn.created_at })));
      }
    };
    if (trx) await write(trx);
    else await this.db.transaction(write);
    return txn;
  }

  async byIdempotencyKey(tenantId: string, key: string): Promise<Txn | null> {
    const row = await this.db('ledger_transactions').where({ tenant_id: tenantId, idempotency_key: key }).first();
    return row ? this.withEntries(row) : null;
  }

  async get(id: string): Promise<Txn | null> {
    const row = await this.db('ledger_transactions').where({ id }).first();
    return row ? this.withEntries(row) : null;
  }

  async withEntries(row: Record<string, any>): Promise<Txn> {
    const entries = await this.db('ledger_entries').where({ transaction_id: row.id }).orderBy('seq').select('account', 'amount');
    return toTxn(row, entries.map((e) => ({ account: e.account, amount: Number(e.amount) })));
  }

  /** Sum of entries per account (one account, or every account under a `prefix:`), optionally in a window and for a tenant's transactions. */
  async sums(opts: { prefix?: string; account?: string; from?: string; to?: string; tenantId?: string; currency?: string }): Promise<Array<{ account: string; currency: string; amount: number }>> {
    const q = this.db('ledger_entries');
    if (opts.account) q.where('account', opts.account);
    // substr rather than LIKE: no wildcards to escape, the same on both databases.
    if (opts.prefix) q.whereRaw('substr(account, 1, ?) = ?', [opts.prefix.length, opts.prefix]);
    if (opts.from) q.where('created_at', '>=', opts.from);
    if (opts.to) q.where('created_at', '<', opts.to);
    if (opts.tenantId) q.where('tenant_id', opts.tenantId);
    if (opts.currency) q.where('currency', opts.currency);
    const rows: Array<{ account: string; currency: string; amount: number | string }> = await q.groupBy('account', 'currency').select('account', 'currency').sum({ amount: 'amount' });
    return rows.map((r) => ({ account: r.account as string, currency: r.currency as string, amount: Number(r.amount) }));
  }

  /** Every entry of every transaction is balanced: the sum over the whole ledger per currency is zero. */
  async trialBalance(): Promise<Record<string, number>> {
    const rows: Array<{ currency: string; amount: number | string }> = await this.db('ledger_entries').groupBy('currency').select('currency').sum({ amount: 'amount' });
    return Object.fromEntries(rows.map((r) => [r.currency, Number(r.amount)]));
  }
}

export function toTxn(row: Record<string, any>, entries: Entry[]): Txn {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    kind: row.kind,
    currency: row.currency,
    amount: Number(row.amount),
    reference_type: row.reference_type ?? null,
    reference_id: row.reference_id ?? null,
    memo: row.memo,
    detail: typeof row.detail === 'string' ? JSON.parse(row.detail) : (row.detail ?? {}),
    idempotency_key: row.idempotency_key ?? null,
    request_hash: row.request_hash ?? null,
    created_at: row.created_at,
    entries,
  };
}
