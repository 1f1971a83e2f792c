import { expect } from 'chai';
import chaos from '../../../plugins/chaos';
import stability from '../../../plugins/stability';
import { billingPlugins } from '../billing/plugins';
import { startHost, type TestHost } from '../../helpers/host';

describe('stability consistency report: the billing ledger balances', () => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ plugins: [...billingPlugins, chaos, stability] });
  });
  after(() => t.stop());

  it('finds every transaction balanced, then names one whose entries no longer sum to zero', async () => {
    const buyer = await t.userToken('member', 'buyer-co', 'pro');
    const body = { provider: 'local', payment_method: 'credit_card', amount: 10.5, currency: 'USD', payment_token: 'tok_abcdef123456', tenant_id: 'buyer-co' };
    const paid = await t.request('POST', '/monetization/payments/process', { token: buyer.token, body, headers: { 'idempotency-key': 'pay-c1' } });
    expect(paid.status).to.equal(201);
    const ok = await t.request('GET', '/stability/consistency/report');
    const check = () => ok.body.checks.find((c: { id: string }) => c.id === 'ledger_balanced');
    expect(check()).to.include({ status: 'ok', violations: 0 });
    const entry = await t.host.services.db('ledger_entries').orderBy('seq').first();
    await t.host.services.db('ledger_entries').where({ seq: entry.seq }).update({ amount: Number(entry.amount) + 1 });
    const bad = await t.request('GET', '/stability/consistency/report');
    expect(bad.body.consistent).to.equal(false);
    expect(bad.body.checks.find((c: { id: string }) => c.id === 'ledger_balanced')).to.deep.include({ status: 'violation', violations: 1, samples: [entry.transaction_id] });
  });
});
