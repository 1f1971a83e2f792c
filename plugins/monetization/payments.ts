import crypto from 'node:crypto';
import { z } from 'zod';
import type { Config } from '../../core/config';
import { Conflict, invalid, NotConfigured } from '../../core/errors';
import type { Entry, Ledger, Txn } from './ledger';
import { bpsOf, money, moneySchema, parseAmount } from './money';

export const paymentBody = z.strictObject({
  provider: z.string().min(1).max(64),
  payment_method: z.enum(['credit_card', 'debit_card', 'bank_transfer', 'wallet']),
  amount: z.union([z.number(), z.string().max(40)]),
  currency: z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code such as USD'),
  payment_token: z.string().min(1).max(256),
  tenant_id: z.string().min(1).max(64),
});
export type PaymentBody = z.infer<typeof paymentBody>;

export const entryView = z.object({ account: z.string(), debit: moneySchema.nullable(), credit: moneySchema.nullable() });
export const transactionView = z.object({
  id: z.string(),
  tenant_id: z.string(),
  kind: z.string(),
  status: z.literal('succeeded'),
  amount: moneySchema,
  memo: z.string(),
  reference: z.object({ type: z.string(), id: z.string() }).nullable(),
  detail: z.record(z.string(), z.unknown()),
  idempotency_key: z.string().nullable(),
  entries: z.array(entryView),
  created_at: z.string(),
});

export function txnView(t: Txn, currencies: Record<string, number>) {
  const fmt = (minor: number) => money(minor, t.currency, currencies);
  return {
    id: t.id, tenant_id: t.tenant_id, kind: t.kind, status: 'succeeded' as const, amount: fmt(t.amount), memo: t.memo,
    reference: t.reference_type && t.reference_id ? { type: t.reference_type, id: t.reference_id } : null, detail: t.detail, idempotency_key: t.idempotency_key,
    entries: t.entries.map((e) => ({ account: e.account, debit: e.amount > 0 ? fmt(e.amount) : null, credit: e.amount < 0 ? fmt(-e.amount) : null })),
    created_at: t.created_at,
  };
}

/** What a provider adapter does with a validated payment: the ledger entries of its outcome. */
export interface PaymentProvider {
  name: string;
  /** Checks the token and answers the entries (cash in, receivable down, fees). */
  charge(p: { tenantId: string; amount: number; currency: string; token: string; method: string }): { entries: Entry[]; fee: number; reference: string };
}

const LOCAL_TOKEN = /^tok_[A-Za-z0-9]{8,64}$/;

/**
 * The default provider: the platform's own ledger. It accepts tokens of the form
 * `tok_<8-64 letters or digits>` (what a card vault would hand out), books the payment as cash
 * received against the tenant's receivable, and its configured fee as an expense.
 */
export function localProvider(config: Config): PaymentProvider {
  return {
    name: 'local',
    charge({ tenantId, amount, token }) {
      if (!LOCAL_TOKEN.test(token)) throw invalid(['body', 'payment_token'], 'the local provider takes tokens of the form tok_<8 to 64 letters or digits>');
      const fee = Math.min(amount, bpsOf(amount, config.billing.localFee.bps) + config.billing.localFee.fixed);
      const entries: Entry[] = [
        { account: 'cash:local', amount },
        { account: `receivable:${tenantId}`, amount: -amount },
      ];
      if (fee > 0) entries.push({ account: 'expense:payment_fees', amount: fee }, { account: 'cash:local', amount: -fee });
      return { entries, fee, reference: `local_${crypto.randomUUID()}` };
    },
  };
}

/** The body's fingerprint: a retry with the same Idempotency-Key must send the same payment. */
function fingerprint(b: PaymentBody, minor: number): string {
  return crypto.createHash('sha256').update(JSON.stringify([b.provider, b.payment_method, minor, b.currency, b.payment_token, b.tenant_id])).digest('hex');
}

export const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:-]{1,255}$/;

/**
 * Processes a payment once per Idempotency-Key: a retry answers the first result (replayed),
 * a different payment under a used key is 409 IDEMPOTENCY_KEY_REUSED.
 */
export async function processPayment(ledger: Ledger, config: Config, b: PaymentBody, key: string | null): Promise<{ txn: Txn; replayed: boolean }> {
  const decimals = config.billing.currencies[b.currency];
  if (decimals === undefined) throw invalid(['body', 'currency'], `unsupported currency; supported: ${Object.keys(config.billing.currencies).join(', ')}`);
  const minor = parseAmount(b.amount, decimals, ['body', 'amount']);
  if (minor <= 0) throw invalid(['body', 'amount'], 'must be greater than zero');
  const hash = fingerprint(b, minor);
  const replay = async () => {
    const first = key ? await ledger.byIdempotencyKey(b.tenant_id, key) : null;
    if (!first) return null;
    if (first.request_hash !== hash) throw new Conflict('This Idempotency-Key was used for a different payment', 'IDEMPOTENCY_KEY_REUSED');
    return { txn: first, replayed: true };
  };
  const seen = await replay();
  if (seen) return seen;
  if (b.provider !== 'local') throw new NotConfigured(`billing.providers.${b.provider}`);
  const provider = localProvider(config);
  const outcome = provider.charge({ tenantId: b.tenant_id, amount: minor, currency: b.currency, token: b.payment_token, method: b.payment_method });
  try {
    const txn = await ledger.post({
      tenantId: b.tenant_id, kind: 'payment', currency: b.currency, amount: minor, reference: { type: 'provider', id: outcome.reference },
      memo: `Payment by ${b.payment_method} through ${provider.name}`,
      detail: { provider: provider.name, payment_method: b.payment_method, fee: money(outcome.fee, b.currency, config.billing.currencies).amount, token_last4: b.payment_token.slice(-4) },
      entries: outcome.entries, idempotencyKey: key, requestHash: hash,
    });
    return { txn, replayed: false };
  } catch (err) {
    // Two requests with one key at once: the database let one in; the other answers its result.
    const again = await replay();
    if (again) return again;
    throw err;
  }
}
