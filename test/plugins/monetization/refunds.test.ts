import { expect } from 'chai';
import { eachDatabase, startHost, type TestHost } from '../../helpers/host';
import { billingPlugins } from '../billing/plugins';

// Refunds of paid charges: partial and full, never more than was paid, idempotent, balanced in
// the ledger, and visible in the tenant's and the platform's figures.
eachDatabase('billing: refunds', (db) => {
  let t: TestHost;
  let buyer: { token: string };
  let seller: { token: string };
  let charges: Array<{ id: string }> = [];
  let paymentId = '';

  before(async () => {
    t = await startHost({ db, plugins: billingPlugins, config: { billing: { usageFlushMs: 20 } } });
    buyer = await t.userToken('member', 'buyer-co', 'pro');
    seller = await t.userToken('member', 'seller-co', 'pro');
    const item = await t.request('POST', '/monetization/marketplace/publish', { token: seller.token, body: { kind: 'kernel_task', kernel: 'analytics', task: 'describe', input: { values: [1, 2] }, name: 'Stats', price_per_run: '1.00' } });
    await t.request('POST', `/monetization/marketplace/items/${item.body.id}/review`, { body: { decision: 'publish' } });
    for (let i = 0; i < 2; i++) expect((await t.request('POST', `/monetization/v1/public/workflows/${item.body.id}/execute`, { token: buyer.token, body: {} })).body.state).to.equal('succeeded');
    charges = (await t.request('GET', '/monetization/payments?kind=charge', { token: buyer.token })).body.transactions.reverse();
    expect(charges).to.have.length(2);
  });
  after(() => t.stop());

  const refund = (body: unknown, key?: string, token?: string | null) => t.request('POST', '/monetization/refunds', { token, body, headers: key ? { 'idempotency-key': key } : {} });
  const balance = async () => (await t.request('GET', '/monetization/dashboard/billing/buyer-co', { token: buyer.token })).body;

  it('refuses a refund of an unpaid charge, then refunds what a payment covers, oldest charge first', async () => {
    const unpaid = await refund({ transaction_id: charges[0]!.id, reason: 'unpaid' });
    expect(unpaid.status).to.equal(409);
    expect(unpaid.body).to.include({ code: 'NOTHING_REFUNDABLE', paid: '0.00', refunded: '0.00' });
    const pay = await t.request('POST', '/monetization/payments/process', { token: buyer.token, body: { provider: 'local', payment_method: 'credit_card', amount: '1.50', currency: 'USD', payment_token: 'tok_abcdefgh', tenant_id: 'buyer-co' } });
    expect(pay.status).to.equal(201);
    paymentId = pay.body.id;
    expect((await balance()).balance).to.deep.equal({ amount: '0.50', currency: 'USD' });

    const part = await refund({ transaction_id: charges[0]!.id, amount: '0.40', reason: 'slow run' }, 'r-1');
    expect(part.status).to.equal(201);
    expect(part.body).to.deep.include({ kind: 'refund', tenant_id: 'buyer-co', replayed: false, refunded_transaction_id: charges[0]!.id, amount: { amount: '0.40', currency: 'USD' } });
    expect(part.body.paid.amount).to.equal('1.00');
    expect(part.body.refunded.amount).to.equal('0.40');
    expect(part.body.refundable.amount).to.equal('0.60');
    // 70 % of the charge went to the publisher: the refund takes back the same shares.
    expect(part.body.entries).to.deep.equal([
      { account: 'payable:seller-co', debit: { amount: '0.28', currency: 'USD' }, credit: null },
      { account: 'revenue:marketplace', debit: { amount: '0.12', currency: 'USD' }, credit: null },
      { account: 'cash:local', debit: null, credit: { amount: '0.40', currency: 'USD' } },
    ]);

    const retry = await refund({ transaction_id: charges[0]!.id, amount: '0.40', reason: 'slow run' }, 'r-1');
    expect(retry.status).to.equal(201);
    expect(retry.headers.get('idempotent-replayed')).to.equal('true');
    expect(retry.body).to.include({ id: part.body.id, replayed: true });
    const reused = await refund({ transaction_id: charges[0]!.id, amount: '0.30', reason: 'slow run' }, 'r-1');
    expect(reused.status).to.equal(409);
    expect(reused.body.code).to.equal('IDEMPOTENCY_KEY_REUSED');

    const over = await refund({ transaction_id: charges[0]!.id, amount: '0.61', reason: 'too much' });
    expect(over.status).to.equal(409);
    expect(over.body).to.include({ code: 'REFUND_EXCEEDS_PAID', refundable: '0.60' });
    const rest = await refund({ transaction_id: charges[0]!.id, reason: 'the rest' });
    expect(rest.body.amount.amount).to.equal('0.60');
    expect((await refund({ transaction_id: charges[0]!.id, reason: 'again' })).body.code).to.equal('NOTHING_REFUNDABLE');

    // The second charge is paid 0.50 of 1.00.
    expect((await refund({ transaction_id: charges[1]!.id, amount: 1, reason: 'x' })).body).to.include({ code: 'REFUND_EXCEEDS_PAID', refundable: '0.50' });
    expect((await refund({ transaction_id: charges[1]!.id, reason: 'x' })).body.amount.amount).to.equal('0.50');
  });

  it('shows refunds in the figures; the balance owed does not move; the ledger stays balanced', async () => {
    const d = await balance();
    expect(d.balance.amount).to.equal('0.50');
    expect(d.refunds_30d).to.deep.equal({ count: 3, amount: { amount: '1.50', currency: 'USD' } });
    const r = await t.request('GET', '/monetization/revenue/summary');
    expect(r.body).to.deep.include({ refunded: { amount: '1.50', currency: 'USD' }, refunds: 3 });
    // 0.60 of marketplace revenue from two runs, less 0.45 taken back; the publisher's 1.40 less 1.05.
    expect(r.body.by_kind.marketplace.amount).to.equal('0.15');
    expect(r.body.publisher_payable.amount).to.equal('0.35');
    expect((await t.request('GET', '/monetization/payments?kind=refund', { token: buyer.token })).body.transactions).to.have.length(3);
    const sums = await t.host.services.db('ledger_entries').groupBy('currency').select('currency').sum({ s: 'amount' });
    expect(sums.map((x: any) => Number(x.s))).to.deep.equal([0]);
  });

  it('refuses a payment, bad input, non-admins and unknown transactions', async () => {
    expect((await refund({ transaction_id: paymentId, reason: 'x' })).body.code).to.equal('NOT_REFUNDABLE');
    expect((await refund({ transaction_id: charges[1]!.id, reason: 'x' }, undefined, buyer.token)).status).to.equal(403);
    expect((await refund({ transaction_id: charges[1]!.id, reason: 'x' }, undefined, null)).status).to.equal(401);
    expect((await refund({ transaction_id: '00000000-0000-4000-8000-000000000000', reason: 'x' })).status).to.equal(404);
    for (const bad of [{ transaction_id: 'x', reason: 'x' }, { transaction_id: charges[1]!.id }, { transaction_id: charges[1]!.id, reason: 'x', amount: '0.001' }, { transaction_id: charges[1]!.id, reason: 'x', amount: 0 }, { transaction_id: charges[1]!.id, reason: 'x', extra: 1 }]) {
      const r = await refund(bad);
      expect(r.status, JSON.stringify(bad)).to.equal(422);
    }
    expect((await refund({ transaction_id: charges[1]!.id, reason: 'x' }, 'bad key!')).status).to.equal(400);
    expect((await t.request('GET', '/monetization/payments?kind=refund', { token: buyer.token })).body.transactions).to.have.length(3);
  });
});
