import { z } from 'zod';
import { BadRequest, NotFound, StateConflict } from '../../core/errors';
import { pageOf } from '../../core/pagination';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { namedTenantScope, tenantScope } from '../../core/tenancy';
import type { Deps } from './index';
import { apiKeyView, createKey, keyView, SCOPES } from './keys';
import { TXN_KINDS } from './ledger';
import { IDEMPOTENCY_KEY, paymentBody, processPayment, transactionView, txnView } from './payments';
import { money, moneySchema } from './money';
import { processRefund, refundBody, refundTarget } from './refunds';
import { svc, tenantMustExist } from './shared';

export const page = { limit: z.coerce.number().int().min(1).max(500).default(100), cursor: z.string().max(200).optional() };
const keyParams = z.object({ key_id: z.uuid() });
const DAY = 86_400_000;

export function idempotencyKey(header: string | undefined): string | null {
  if (header === undefined) return null;
  if (!IDEMPOTENCY_KEY.test(header)) throw new BadRequest('Idempotency-Key: 1 to 255 letters, digits or ._:-');
  return header;
}

export function accountRoutes(route: RouteMaker<Deps>): RouteDef[] {
  return [
    route({
      method: 'post',
      path: '/monetization/api-keys',
      summary: 'Create an API key (the secret is shown only in this answer; it is stored hashed)',
      description:
        'Scopes: execute (the public monetized run), read (GET routes a viewer may call), write (routes a member may call). A key acts in its tenant; ' +
        'present it as `Authorization: Bearer pk_...` or `X-API-Key`. Admins may create a key for another tenant with tenant_id.',
      access: 'member',
      body: z.strictObject({
        name: z.string().trim().min(1).max(128),
        scopes: z.array(z.enum(SCOPES)).min(1).max(3).default(['execute']),
        expires_at: z.iso.datetime().optional(),
        rate_limit_per_minute: z.number().int().min(1).max(100_000).optional(),
        tenant_id: z.string().min(1).max(64).optional(),
      }),
      response: apiKeyView.extend({ key: z.string() }),
      status: 201,
      errors: [404, 422],
      handler: async ({ body, caller, services }) => {
        const scope = namedTenantScope(services.db, caller!, body.tenant_id ?? caller!.tenantId);
        await tenantMustExist(services.db, scope.tenantId);
        const now = services.clock.now();
        if (body.expires_at && body.expires_at <= now.toISOString()) throw new BadRequest('expires_at is in the past');
        const { key, view } = await createKey(services.db, {
          tenantId: scope.tenantId, name: body.name, scopes: body.scopes, ratePerMinute: body.rate_limit_per_minute ?? services.config.billing.defaultKeyRatePerMinute,
          expiresAt: body.expires_at ?? null, createdBy: caller!.id, now,
        });
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'create_api_key', target_type: 'api_key', target_id: view.id, result: 'succeeded', tenant_id: scope.tenantId, detail: { name: view.name, scopes: view.scopes } });
        return { ...view, key };
      },
    }),
    route({
      method: 'get',
      path: '/monetization/api-keys/{key_id}',
      summary: 'One API key without its secret, with its use over the last 30 days',
      access: 'viewer',
      params: keyParams,
      response: apiKeyView.extend({ usage_30d: z.object({ requests: z.number(), public_runs: z.number(), kernel_tasks: z.number() }) }),
      errors: [404],
      handler: async ({ params, caller, services }) => {
        const q = services.db('api_keys').where({ id: params.key_id });
        if (caller!.role !== 'admin') q.andWhere({ tenant_id: caller!.tenantId });
        const row = await q.first();
        if (!row) throw new NotFound('API key not found');
        const now = services.clock.now();
        const rows = await services.usage.query({ tenantId: row.tenant_id, keyId: row.id, metrics: ['requests', 'public_runs', 'kernel_tasks'], from: new Date(now.getTime() - 30 * DAY).toISOString(), to: now.toISOString(), granularity: 'total' });
        const sum = (m: string) => rows.filter((r) => r.metric === m).reduce((a, r) => a + r.quantity, 0);
        return { ...keyView(row, now), usage_30d: { requests: sum('requests'), public_runs: sum('public_runs'), kernel_tasks: sum('kernel_tasks') } };
      },
    }),
    route({
      method: 'delete',
      path: '/monetization/api-keys/{key_id}',
      summary: 'Revoke an API key (beyond the spec); it stops working at once',
      access: 'member',
      params: keyParams,
      response: apiKeyView,
      errors: [404, 409],
      handler: async ({ params, caller, services }) => {
        const scope = tenantScope(services.db, caller!);
        const row = await scope.get('api_keys', { id: params.key_id }, 'API key');
        const now = services.clock.now();
        if (row.revoked_at) throw new StateConflict('revoked', [], 'The API key is already revoked');
        await scope.update('api_keys', { id: row.id }, { revoked_at: now.toISOString() }, 'API key');
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'revoke_api_key', target_type: 'api_key', target_id: String(row.id), result: 'succeeded', tenant_id: caller!.tenantId });
        return keyView({ ...row, revoked_at: now.toISOString() }, now);
      },
    }),
    route({
      method: 'post',
      path: '/monetization/payments/process',
      summary: "Process a payment into a tenant's account through a payment provider (default: the local ledger)",
      description:
        'amount is a JSON number or a decimal string, with no more decimals than the currency has. provider "local" books it in the ledger ' +
        '(cash in, receivable down, provider fee as an expense); other providers answer 503 NOT_CONFIGURED. Send an Idempotency-Key header: ' +
        'a retry with it answers the first result (header Idempotent-Replayed: true) and never charges twice; another payment under a used key is 409.',
      access: 'member',
      body: paymentBody,
      response: transactionView.extend({ replayed: z.boolean() }),
      status: 201,
      errors: [400, 404, 409, 422, 503],
      handler: async ({ body, caller, req, res, services }) => {
        const scope = namedTenantScope(services.db, caller!, body.tenant_id);
        await tenantMustExist(services.db, scope.tenantId);
        const key = idempotencyKey(req.get('idempotency-key') ?? undefined);
        const { txn, replayed } = await processPayment(svc(services).ledger, services.config, body, key);
        if (replayed) res.setHeader('Idempotent-Replayed', 'true');
        else await services.actions.record({ source: 'manual', actor: caller!.id, action: 'process_payment', target_type: 'payment', target_id: txn.id, result: 'succeeded', tenant_id: scope.tenantId, detail: { amount: String(body.amount), currency: body.currency, provider: body.provider } });
        return { ...txnView(txn, services.config.billing.currencies), replayed };
      },
    }),
    route({
      method: 'post',
      path: '/monetization/refunds',
      summary: 'Refund a paid charge or closed invoice, in part or in full (admins; beyond the spec)',
      description:
        'amount (number or decimal string in the transaction\'s currency; absent = all still refundable) may not exceed what the tenant\'s payments cover of it ' +
        '(oldest debit first) less earlier refunds: 409 REFUND_EXCEEDS_PAID, or NOTHING_REFUNDABLE. The ledger debits what the charge credited (revenue, publisher payable, tax) ' +
        'in proportion and credits cash: the balance owed does not move. Idempotency-Key: a retry answers the first refund (Idempotent-Replayed: true); another request under a used key is 409.',
      access: 'admin',
      body: refundBody,
      response: transactionView.extend({ replayed: z.boolean(), refunded_transaction_id: z.string(), paid: moneySchema, refunded: moneySchema, refundable: moneySchema }),
      status: 201,
      errors: [400, 404, 409, 422],
      handler: async ({ body, caller, req, res, services }) => {
        const key = idempotencyKey(req.get('idempotency-key') ?? undefined);
        const ledger = svc(services).ledger;
        const original = await refundTarget(ledger, body.transaction_id, null);
        const { txn, replayed, state } = await processRefund(ledger, services.config, original, body, key, caller!.id);
        if (replayed) res.setHeader('Idempotent-Replayed', 'true');
        else await services.actions.record({ source: 'manual', actor: caller!.id, action: 'refund', target_type: 'ledger_transaction', target_id: original.id, result: 'succeeded', tenant_id: original.tenant_id, detail: { refund_id: txn.id, amount: txn.amount, currency: txn.currency, reason: body.reason } });
        const fmt = (m: number) => money(m, txn.currency, services.config.billing.currencies);
        return { ...txnView(txn, services.config.billing.currencies), replayed, refunded_transaction_id: original.id, paid: fmt(state.paid), refunded: fmt(state.refunded), refundable: fmt(state.remaining) };
      },
    }),
    route({
      method: 'get',
      path: '/monetization/payments',
      summary: "Ledger transactions of the caller's tenant (payments, charges, invoices, refunds) with their entries, newest first",
      description: 'Admins see every tenant unless tenant_id is given.',
      access: 'viewer',
      query: z.object({ kind: z.enum(TXN_KINDS).optional(), tenant_id: z.string().min(1).max(64).optional(), ...page }),
      response: z.object({ transactions: z.array(transactionView), next_cursor: z.string().nullable() }),
      errors: [404, 422],
      handler: async ({ query, caller, services }) => {
        const all = caller!.role === 'admin' && !query.tenant_id;
        const q = all ? services.db('ledger_transactions') : namedTenantScope(services.db, caller!, query.tenant_id ?? caller!.tenantId).select('ledger_transactions');
        if (query.kind) q.where('kind', query.kind);
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        const ledger = svc(services).ledger;
        const txns = await Promise.all(items.map((r) => ledger.withEntries(r)));
        return { transactions: txns.map((t) => txnView(t, services.config.billing.currencies)), next_cursor };
      },
    }),
  ];
}
