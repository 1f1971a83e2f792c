import { expect } from 'chai';
import { eventually } from '../../helpers/eventually';
import { eachDatabase, startHost, type TestHost } from '../../helpers/host';
import { billingPlugins } from './plugins';

// The group's "done when": a key calls the public run; usage, ledger, invoice and revenue
// agree to the cent; a retried payment charges once; a plan without a feature gets 403.
eachDatabase('billing: key -> public run -> usage, ledger, invoice, revenue', (db) => {
  let t: TestHost;
  let buyer: { token: string };
  let seller: { token: string };
  let itemId = '';
  let key = '';
  let keyId = '';

  before(async () => {
    t = await startHost({ db, plugins: billingPlugins, config: { billing: { usageFlushMs: 20 } } });
    buyer = await t.userToken('member', 'buyer-co', 'pro');
    seller = await t.userToken('member', 'seller-co', 'pro');
  });
  after(() => t.stop());

  it('publishes a kernel task item at 0.25 a run, reviewed by an admin', async () => {
    const r = await t.request('POST', '/monetization/marketplace/publish', {
      token: seller.token, body: { kind: 'kernel_task', kernel: 'analytics', task: 'describe', input: { values: [1, 2, 3] }, name: 'Stats', price_per_run: '0.25' },
    });
    expect(r.status).to.equal(201);
    expect(r.body).to.include({ state: 'draft', tenant_id: 'seller-co' });
    expect(r.body.price_per_run).to.deep.equal({ amount: '0.25', currency: 'USD' });
    itemId = r.body.id;
    const notYet = await t.request('POST', `/monetization/v1/public/workflows/${itemId}/execute`, { token: buyer.token, body: {} });
    expect(notYet.status).to.equal(404);
    const rev = await t.request('POST', `/monetization/marketplace/items/${itemId}/review`, { body: { decision: 'publish' } });
    expect(rev.status).to.equal(200);
    expect(rev.body.state).to.equal('published');
    const again = await t.request('POST', `/monetization/marketplace/items/${itemId}/review`, { body: { decision: 'reject' } });
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('INVALID_STATE');
  });

  it('creates an API key shown once and stored hashed', async () => {
    const r = await t.request('POST', '/monetization/api-keys', { token: buyer.token, body: { name: 'ci', scopes: ['execute'], rate_limit_per_minute: 5 } });
    expect(r.status).to.equal(201);
    expect(r.body.key).to.match(/^pk_[A-Za-z0-9_-]{40,}$/);
    key = r.body.key;
    keyId = r.body.id;
    const row = await t.host.services.db('api_keys').where({ id: keyId }).first();
    expect(row.key_hash).to.have.length(64);
    expect(JSON.stringify(row)).not.to.include(key);
    const shown = await t.request('GET', `/monetization/api-keys/${keyId}`, { token: buyer.token });
    expect(shown.status).to.equal(200);
    expect(shown.body).not.to.have.property('key');
    expect(shown.body).to.include({ state: 'active', tenant_id: 'buyer-co', rate_limit_per_minute: 5 });
  });

  it('runs the item with the key, charges the buyer and pays the seller', async () => {
    const r = await t.request('POST', `/monetization/v1/public/workflows/${itemId}/execute`, { token: null, headers: { 'x-api-key': key }, body: {} });
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ state: 'succeeded', tenant_id: 'buyer-co', key_id: keyId });
    expect(r.body.steps[0].output).to.include({ count: 3, mean: 2 });
    expect(r.body.charged).to.deep.equal({ amount: '0.25', currency: 'USD' });

    // The same key as a bearer token works too; a bad key is 401; the key cannot read anything else.
    const bearer = await t.request('POST', `/monetization/v1/public/workflows/${itemId}/execute`, { token: key, body: { input: { values: [5] } } });
    expect(bearer.status).to.equal(200);
    expect(bearer.body.steps[0].output.count).to.equal(1);
    expect((await t.request('POST', `/monetization/v1/public/workflows/${itemId}/execute`, { token: null, headers: { 'x-api-key': 'pk_nope' }, body: {} })).status).to.equal(401);
    const scope = await t.request('GET', '/monetization/payments', { token: key });
    expect(scope.status).to.equal(403);
    expect(scope.body.code).to.equal('API_KEY_SCOPE');
  });

  it('usage, ledger entries, invoice line and revenue summary agree to the cent', async () => {
    const usage = await eventually(async () => {
      const u = await t.request('GET', `/usage/buyer-co?granularity=total&key_id=${keyId}`, { token: buyer.token });
      const runs = u.body.usage.filter((x: { metric: string }) => x.metric === 'public_runs');
      const reqs = u.body.usage.find((x: { metric: string; dimension: string }) => x.metric === 'requests' && x.dimension === 'monetization');
      return runs.length && reqs?.quantity >= 2 ? u.body : null;
    });
    const runs = usage.usage.filter((x: { metric: string }) => x.metric === 'public_runs').reduce((a: number, x: { quantity: number }) => a + x.quantity, 0);
    expect(runs).to.equal(2);
    expect(usage.usage.some((x: { metric: string; dimension: string }) => x.metric === 'kernel_tasks' && x.dimension === 'analytics')).to.equal(true);

    const ledger = await t.request('GET', '/monetization/payments?kind=charge', { token: buyer.token });
    expect(ledger.status).to.equal(200);
    expect(ledger.body.transactions).to.have.length(2);
    const txn = ledger.body.transactions[0];
    expect(txn.amount).to.deep.equal({ amount: '0.25', currency: 'USD' });
    // 70% of 25 cents is 17.5, rounded half up to 18 for the publisher; the platform keeps 7.
    expect(txn.entries).to.deep.equal([
      { account: 'receivable:buyer-co', debit: { amount: '0.25', currency: 'USD' }, credit: null },
      { account: 'payable:seller-co', debit: null, credit: { amount: '0.18', currency: 'USD' } },
      { account: 'revenue:marketplace', debit: null, credit: { amount: '0.07', currency: 'USD' } },
    ]);

    const inv = await t.request('GET', '/billing/invoice/buyer-co', { token: buyer.token });
    expect(inv.status).to.equal(200);
    const line = inv.body.lines.find((l: { kind: string }) => l.kind === 'marketplace');
    expect(line).to.include({ quantity: 2, posted_on_use: true });
    expect(line.amount).to.deep.equal({ amount: '0.50', currency: 'USD' });
    const cents = (a: { amount: string }) => Math.round(Number(a.amount) * 100);
    expect(inv.body.lines.reduce((s: number, l: { amount: { amount: string } }) => s + cents(l.amount), 0)).to.equal(cents(inv.body.total));

    const rev = await t.request('GET', '/monetization/revenue/summary');
    expect(rev.status).to.equal(200);
    expect(rev.body.by_kind.marketplace).to.deep.equal({ amount: '0.14', currency: 'USD' });
    expect(rev.body.by_tenant['buyer-co']).to.deep.equal({ amount: '0.14', currency: 'USD' });
    expect(rev.body.publisher_payable).to.deep.equal({ amount: '0.36', currency: 'USD' });
    // Platform share + publisher share = what the buyer was charged = the invoice line = runs x price.
    expect(cents(rev.body.by_kind.marketplace) + cents(rev.body.publisher_payable)).to.equal(cents(line.amount));
    expect(runs * 25).to.equal(cents(line.amount));
    const kpis = await t.request('GET', '/monetization/v1/public/kpis', { token: null });
    expect(kpis.status).to.equal(200);
    expect(kpis.body).to.include({ runs: 2, succeeded: 2, success_rate: 1, published_items: 1 });
    expect(kpis.body.p95_run_ms).to.be.a('number');
  });

  it('a retried payment with the same Idempotency-Key charges once', async () => {
    const body = { provider: 'local', payment_method: 'credit_card', amount: 10.5, currency: 'USD', payment_token: 'tok_abcdef123456', tenant_id: 'buyer-co' };
    const first = await t.request('POST', '/monetization/payments/process', { token: buyer.token, body, headers: { 'idempotency-key': 'pay-1' } });
    expect(first.status).to.equal(201);
    expect(first.body).to.include({ replayed: false, kind: 'payment', status: 'succeeded' });
    expect(first.body.amount).to.deep.equal({ amount: '10.50', currency: 'USD' });
    const retry = await t.request('POST', '/monetization/payments/process', { token: buyer.token, body, headers: { 'idempotency-key': 'pay-1' } });
    expect(retry.status).to.equal(201);
    expect(retry.headers.get('idempotent-replayed')).to.equal('true');
    expect(retry.body).to.include({ id: first.body.id, replayed: true });
    const other = await t.request('POST', '/monetization/payments/process', { token: buyer.token, body: { ...body, amount: '11.00' }, headers: { 'idempotency-key': 'pay-1' } });
    expect(other.status).to.equal(409);
    expect(other.body.code).to.equal('IDEMPOTENCY_KEY_REUSED');
    const list = await t.request('GET', '/monetization/payments?kind=payment', { token: buyer.token });
    expect(list.body.transactions).to.have.length(1);
    const dash = await t.request('GET', '/monetization/dashboard/billing/buyer-co', { token: buyer.token });
    expect(dash.status).to.equal(200);
    // Owed 0.50 for the runs, paid 10.50: a credit of 10.00.
    expect(dash.body.balance).to.deep.equal({ amount: '-10.00', currency: 'USD' });
    expect(dash.body.payments_30d).to.deep.equal({ count: 1, amount: { amount: '10.50', currency: 'USD' } });
    const trial = await t.host.services.db('ledger_entries').sum({ s: 'amount' });
    expect(Number(trial[0].s)).to.equal(0);
  });

  it('a plan without a feature gets 403 PLAN_FEATURE; an override opens it and shows in the tenant features', async () => {
    const free = await t.userToken('viewer', 'free-co', 'free');
    const r = await t.request('GET', '/sla/report/free-co', { token: free.token });
    expect(r.status).to.equal(403);
    expect(r.body.code).to.equal('PLAN_FEATURE');
    const toggle = await t.request('POST', '/saas/features/free-co/toggle', { body: { feature: 'sla', enabled: true } });
    expect(toggle.status).to.equal(200);
    expect(toggle.body).to.include({ feature: 'sla', enabled: true, previous: false });
    const after = await t.request('GET', '/sla/report/free-co', { token: free.token });
    expect(after.status).to.equal(404);
    expect(after.body.code).to.equal('NO_SLA');
    const features = await t.request('GET', '/tenant/features/free-co', { token: free.token });
    expect(features.status).to.equal(200);
    expect(features.body.features.sla).to.equal(true);
    expect(features.body.overrides).to.deep.equal({ sla: true });
    const off = await t.request('POST', '/saas/features/free-co/toggle', { body: { feature: 'api', enabled: false } });
    expect(off.body.features.api).to.equal(false);
    const key = await t.request('POST', '/monetization/api-keys', { token: (await t.userToken('member', 'free-co', 'free')).token, body: { name: 'k' } });
    const refused = await t.request('POST', `/monetization/v1/public/workflows/${itemId}/execute`, { token: key.body.key, body: {} });
    expect(refused.status).to.equal(403);
    expect(refused.body.code).to.equal('PLAN_FEATURE');
  });
});
