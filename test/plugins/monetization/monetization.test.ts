import { expect } from 'chai';
import { startHost, type TestHost } from '../../helpers/host';
import { billingPlugins } from '../billing/plugins';

// Every /monetization endpoint and the billing reports: success, auth, bad input, state, isolation.
describe('billing: monetization endpoints', () => {
  let t: TestHost;
  let member: { token: string };
  let viewer: { token: string };
  let other: { token: string };

  before(async () => {
    t = await startHost({ plugins: billingPlugins, config: { billing: { usageFlushMs: 20, taxRateBps: 1000, localFee: { bps: 290, fixed: 30 } } } });
    member = await t.userToken('member', 'acme', 'pro');
    viewer = await t.userToken('viewer', 'acme', 'pro');
    other = await t.userToken('member', 'globex', 'pro');
  });
  after(() => t.stop());

  describe('API keys', () => {
    it('401 without credentials, 403 for a viewer, 422 for bad input', async () => {
      expect((await t.request('POST', '/monetization/api-keys', { token: null, body: { name: 'x' } })).status).to.equal(401);
      expect((await t.request('POST', '/monetization/api-keys', { token: viewer.token, body: { name: 'x' } })).status).to.equal(403);
      const bad = await t.request('POST', '/monetization/api-keys', { token: member.token, body: { name: 'x', scopes: ['admin'] } });
      expect(bad.status).to.equal(422);
      expect(bad.body.detail[0].loc).to.deep.equal(['body', 'scopes', 0]);
      expect((await t.request('POST', '/monetization/api-keys', { token: member.token, body: { name: 'x', expires_at: '2001-01-01T00:00:00Z' } })).status).to.equal(400);
      expect((await t.request('POST', '/monetization/api-keys', { token: member.token, body: { name: 'x', tenant_id: 'globex' } })).status).to.equal(404);
    });

    it("another tenant's key is 404; an expired or revoked key is refused; its own budget answers 429", async () => {
      const k = await t.request('POST', '/monetization/api-keys', { token: member.token, body: { name: 'reader', scopes: ['read'], rate_limit_per_minute: 2 } });
      expect((await t.request('GET', `/monetization/api-keys/${k.body.id}`, { token: other.token })).status).to.equal(404);
      expect((await t.request('GET', '/monetization/api-keys/not-a-uuid', { token: member.token })).status).to.equal(422);
      const ok = await t.request('GET', `/monetization/api-keys/${k.body.id}`, { token: k.body.key });
      expect(ok.status).to.equal(200);
      expect(ok.headers.get('x-key-ratelimit-limit')).to.equal('2');
      expect((await t.request('GET', `/monetization/api-keys/${k.body.id}`, { token: k.body.key })).status).to.equal(200);
      const over = await t.request('GET', `/monetization/api-keys/${k.body.id}`, { token: k.body.key });
      expect(over.status).to.equal(429);
      expect(Number(over.headers.get('retry-after'))).to.be.greaterThan(0);
      const write = await t.request('POST', '/monetization/api-keys', { token: k.body.key, body: { name: 'y' } });
      expect(write.status).to.equal(403);
      const del = await t.request('DELETE', `/monetization/api-keys/${k.body.id}`, { token: member.token });
      expect(del.status).to.equal(200);
      expect(del.body.state).to.equal('revoked');
      expect((await t.request('DELETE', `/monetization/api-keys/${k.body.id}`, { token: member.token })).status).to.equal(409);
      expect((await t.request('GET', '/tenant/current', { token: k.body.key })).status).to.equal(401);
      const e = await t.request('POST', '/monetization/api-keys', { token: member.token, body: { name: 'short', scopes: ['read'], expires_at: '2099-01-01T00:00:00Z' } });
      expect((await t.request('GET', '/tenant/current', { token: e.body.key })).status).to.equal(200);
      await t.host.services.db('api_keys').where({ id: e.body.id }).update({ expires_at: '2001-01-01T00:00:00.000Z' });
      const expired = await t.request('GET', '/tenant/current', { token: e.body.key });
      expect(expired.status).to.equal(401);
      expect(expired.body.detail).to.match(/expired/);
    });
  });

  describe('payments', () => {
    const body = { provider: 'local', payment_method: 'credit_card', amount: '20.00', currency: 'USD', payment_token: 'tok_abcdef123456', tenant_id: 'acme' };
    it('books the payment and the local fee as balanced entries', async () => {
      const r = await t.request('POST', '/monetization/payments/process', { token: member.token, body });
      expect(r.status).to.equal(201);
      // Fee: 2.9% of 20.00 = 0.58, plus 0.30.
      expect(r.body.detail.fee).to.equal('0.88');
      const debit = r.body.entries.filter((e: { debit: unknown }) => e.debit).map((e: { debit: { amount: string } }) => Number(e.debit.amount) * 100);
      const credit = r.body.entries.filter((e: { credit: unknown }) => e.credit).map((e: { credit: { amount: string } }) => Number(e.credit.amount) * 100);
      expect(Math.round(debit.reduce((a: number, b: number) => a + b, 0))).to.equal(Math.round(credit.reduce((a: number, b: number) => a + b, 0)));
    });
    it('422 for too many decimals, a bad token, an unknown currency; 503 for an outside provider; 404 for another tenant; 401/403', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [[{ amount: 1.234 }, 'amount'], [{ amount: '-5' }, 'amount'], [{ payment_token: 'card-4242' }, 'payment_token'], [{ currency: 'XYZ' }, 'currency'], [{ currency: 'JPY', amount: '10.5' }, 'amount']];
      for (const [patch, field] of cases) {
        const r = await t.request('POST', '/monetization/payments/process', { token: member.token, body: { ...body, ...patch } });
        expect(r.status, JSON.stringify(patch)).to.equal(422);
        expect(r.body.detail[0].loc).to.deep.equal(['body', field]);
      }
      const stripe = await t.request('POST', '/monetization/payments/process', { token: member.token, body: { ...body, provider: 'stripe' } });
      expect(stripe.status).to.equal(503);
      expect(stripe.body).to.include({ code: 'NOT_CONFIGURED' });
      expect((await t.request('POST', '/monetization/payments/process', { token: other.token, body })).status).to.equal(404);
      expect((await t.request('POST', '/monetization/payments/process', { token: viewer.token, body })).status).to.equal(403);
      expect((await t.request('POST', '/monetization/payments/process', { token: null, body })).status).to.equal(401);
      expect((await t.request('POST', '/monetization/payments/process', { token: member.token, body, headers: { 'idempotency-key': 'bad key!' } })).status).to.equal(400);
    });
    it("lists only the tenant's transactions; 401; 422 for a bad cursor", async () => {
      const mine = await t.request('GET', '/monetization/payments', { token: viewer.token });
      expect(mine.status).to.equal(200);
      expect(mine.body.transactions.every((x: { tenant_id: string }) => x.tenant_id === 'acme')).to.equal(true);
      expect((await t.request('GET', '/monetization/payments', { token: other.token })).body.transactions).to.deep.equal([]);
      expect((await t.request('GET', '/monetization/payments', { token: null })).status).to.equal(401);
      expect((await t.request('GET', '/monetization/payments?cursor=zzz', { token: viewer.token })).status).to.equal(422);
      expect((await t.request('GET', '/monetization/payments?tenant_id=acme', { token: other.token })).status).to.equal(404);
    });
  });

  describe('catalogue and subscriptions', () => {
    it('lists plans and add-ons as SKUs with prices', async () => {
      const r = await t.request('GET', '/monetization/products/skus', { token: viewer.token });
      expect(r.status).to.equal(200);
      const pro = r.body.skus.find((s: { sku: string }) => s.sku === 'plan:pro');
      expect(pro.monthly_price).to.deep.equal({ amount: '49.00', currency: 'USD' });
      expect(r.body.skus.some((s: { sku: string }) => s.sku === 'addon:sla')).to.equal(true);
      expect((await t.request('GET', '/monetization/products/skus', { token: null })).status).to.equal(401);
    });
    it('changes the plan, adds an add-on (its feature follows), and refuses repeats and unknown SKUs', async () => {
      const c = await t.userToken('member', 'subco', 'free');
      const up = await t.request('POST', '/monetization/products/subscribe', { token: c.token, body: { sku: 'plan:pro' } });
      expect(up.status).to.equal(200);
      expect(up.body).to.include({ plan: 'pro', previous_plan: 'free' });
      expect((await t.request('POST', '/monetization/products/subscribe', { token: c.token, body: { sku: 'plan:pro' } })).status).to.equal(409);
      const addon = await t.request('POST', '/monetization/products/subscribe', { token: c.token, body: { sku: 'addon:sla' } });
      expect(addon.body.addons).to.deep.equal(['sla']);
      const f = await t.request('GET', '/tenant/features/subco', { token: c.token });
      expect(f.body.features.sla).to.equal(true);
      const inv = await t.request('GET', '/billing/invoice/subco', { token: c.token });
      expect(inv.body.lines.map((l: { kind: string }) => l.kind)).to.include.members(['plan', 'addon', 'tax']);
      expect((await t.request('POST', '/monetization/products/subscribe', { token: c.token, body: { sku: 'plan:gold' } })).status).to.equal(422);
      expect((await t.request('POST', '/monetization/products/subscribe', { token: c.token, body: { sku: 'plan:free', tenant_id: 'acme' } })).status).to.equal(404);
      expect((await t.request('POST', '/monetization/products/subscribe', { token: viewer.token, body: { sku: 'plan:free' } })).status).to.equal(403);
    });
  });

  describe('marketplace', () => {
    it('publishes a workflow of the tenant (not another tenant\'s) and lists drafts only to their owner', async () => {
      const wf = await t.request('POST', '/workflows', { token: member.token, body: { name: 'two', steps: [{ id: 'a', kernel: 'analytics', task: 'describe', input: { values: [1, 2] } }, { id: 'b', kernel: 'analytics', task: 'describe', input: { values: ['${steps.a.output.mean}', 4] } }] } });
      expect(wf.status).to.equal(201);
      expect((await t.request('POST', '/monetization/marketplace/publish', { token: other.token, body: { kind: 'workflow', workflow_id: wf.body.id, name: 'x', price_per_run: 1 } })).status).to.equal(404);
      const p = await t.request('POST', '/monetization/marketplace/publish', { token: member.token, body: { kind: 'workflow', workflow_id: wf.body.id, name: 'Two step', price_per_run: 1 } });
      expect(p.status).to.equal(201);
      expect((await t.request('GET', '/monetization/marketplace/items', { token: other.token })).body.items).to.deep.equal([]);
      expect((await t.request('GET', '/monetization/marketplace/items', { token: viewer.token })).body.items).to.have.length(1);
      await t.request('POST', `/monetization/marketplace/items/${p.body.id}/review`, { body: { decision: 'publish' } });
      expect((await t.request('GET', '/monetization/marketplace/items?state=published', { token: other.token })).body.items).to.have.length(1);
      const run = await t.request('POST', `/monetization/v1/public/workflows/${wf.body.id}/execute`, { token: other.token, body: {}, headers: { 'idempotency-key': 'run-1' } });
      expect(run.status).to.equal(200);
      expect(run.body.steps[1].output.mean).to.equal(2.75);
      const again = await t.request('POST', `/monetization/v1/public/workflows/${wf.body.id}/execute`, { token: other.token, body: {}, headers: { 'idempotency-key': 'run-1' } });
      expect(again.body.run_id).to.equal(run.body.run_id);
      expect((await t.request('GET', '/monetization/payments?kind=charge', { token: other.token })).body.transactions).to.have.length(1);
    });
    it('422 for bad items, 403 for viewers and for review by non-admins, 401', async () => {
      const bad = [
        { kind: 'kernel_task', kernel: 'nope', task: 'x', name: 'n', price_per_run: 1 },
        { kind: 'kernel_task', kernel: 'analytics', task: 'nope', name: 'n', price_per_run: 1 },
        { kind: 'kernel_task', kernel: 'analytics', task: 'describe', name: 'n', price_per_run: '0.001' },
        { kind: 'other', name: 'n', price_per_run: 1 },
      ];
      for (const b of bad) expect((await t.request('POST', '/monetization/marketplace/publish', { token: member.token, body: b })).status, JSON.stringify(b)).to.equal(422);
      const ok = { kind: 'kernel_task', kernel: 'analytics', task: 'describe', name: 'n', price_per_run: 0 };
      expect((await t.request('POST', '/monetization/marketplace/publish', { token: viewer.token, body: ok })).status).to.equal(403);
      expect((await t.request('POST', '/monetization/marketplace/publish', { token: null, body: ok })).status).to.equal(401);
      const item = await t.request('POST', '/monetization/marketplace/publish', { token: member.token, body: ok });
      expect((await t.request('POST', `/monetization/marketplace/items/${item.body.id}/review`, { token: member.token, body: { decision: 'publish' } })).status).to.equal(403);
      expect((await t.request('GET', '/monetization/marketplace/items?state=bogus', { token: viewer.token })).status).to.equal(422);
      expect((await t.request('GET', '/monetization/marketplace/items', { token: null })).status).to.equal(401);
    });
    it('a failed run is not charged; public execute needs credentials and a UUID', async () => {
      const item = await t.request('POST', '/monetization/marketplace/publish', { token: member.token, body: { kind: 'kernel_task', kernel: 'analytics', task: 'regression', input: { x: [1, 1], y: [1, 2] }, name: 'flat', price_per_run: 2 } });
      await t.request('POST', `/monetization/marketplace/items/${item.body.id}/review`, { body: { decision: 'publish' } });
      const r = await t.request('POST', `/monetization/v1/public/workflows/${item.body.id}/execute`, { token: other.token, body: {} });
      expect(r.status).to.equal(200);
      expect(r.body.state).to.equal('failed');
      expect(r.body.charged.amount).to.equal('0.00');
      expect((await t.request('POST', `/monetization/v1/public/workflows/${item.body.id}/execute`, { token: null, body: {} })).status).to.equal(401);
      expect((await t.request('POST', '/monetization/v1/public/workflows/nope/execute', { token: other.token, body: {} })).status).to.equal(422);
    });
  });

  describe('reports', () => {
    it('revenue, profitability: admins only, 422 for a reversed window', async () => {
      for (const p of ['/monetization/revenue/summary', '/monetization/profitability/summary', '/investor/report']) {
        const r = await t.request('GET', p);
        expect(r.status, p).to.equal(200);
        expect(r.body.method, p).to.be.a('string');
        expect((await t.request('GET', p, { token: member.token })).status, p).to.equal(403);
        expect((await t.request('GET', p, { token: null })).status, p).to.equal(401);
      }
      expect((await t.request('GET', '/monetization/revenue/summary?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z')).status).to.equal(422);
      expect((await t.request('GET', '/investor/report?months=99')).status).to.equal(422);
      const prof = await t.request('GET', '/monetization/profitability/summary');
      const acme = prof.body.tenants.find((x: { tenant_id: string }) => x.tenant_id === 'acme');
      expect(acme).to.not.equal(undefined);
      expect(Number(acme.cost.amount)).to.be.at.least(0);
    });
    it('cost breakdown and billing dashboard of one\'s own tenant; another tenant is 404', async () => {
      const c = await t.request('GET', '/monetization/dashboard/cost-breakdown', { token: viewer.token });
      expect(c.status).to.equal(200);
      expect(c.body.lines.some((l: { resource: string }) => l.resource === 'storage_bytes')).to.equal(true);
      expect((await t.request('GET', '/monetization/dashboard/cost-breakdown?tenant_id=globex', { token: viewer.token })).status).to.equal(404);
      expect((await t.request('GET', '/monetization/dashboard/cost-breakdown', { token: null })).status).to.equal(401);
      const d = await t.request('GET', '/monetization/dashboard/billing/acme', { token: viewer.token });
      expect(d.status).to.equal(200);
      expect(d.body.plan).to.equal('pro');
      expect((await t.request('GET', '/monetization/dashboard/billing/globex', { token: viewer.token })).status).to.equal(404);
      expect((await t.request('GET', '/monetization/dashboard/billing/acme', { token: null })).status).to.equal(401);
    });
    it('a closed month is frozen and posted to the ledger once; 422 for a future month', async () => {
      const db = t.host.services.db;
      const now = new Date();
      const past = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 10)).toISOString();
      await db('tenants').insert({ id: 'oldco', name: 'Old', plan: 'pro', domains: '[]', created_at: past });
      const period = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
      const first = await t.request('GET', `/billing/invoice/oldco?period=${period}`);
      expect(first.status).to.equal(200);
      expect(first.body.state).to.equal('closed');
      // A whole month of pro (49.00) plus 10% tax.
      expect(first.body.total).to.deep.equal({ amount: '53.90', currency: 'USD' });
      const again = await t.request('GET', `/billing/invoice/oldco?period=${period}`);
      expect(again.body).to.deep.equal(first.body);
      const txns = await db('ledger_transactions').where({ tenant_id: 'oldco', kind: 'invoice' });
      expect(txns).to.have.length(1);
      expect((await t.host.services.actions.list({ limit: 5, action: 'close_invoice', target_id: first.body.invoice_id })).actions).to.have.length(1);
      const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().slice(0, 7);
      expect((await t.request('GET', `/billing/invoice/oldco?period=${next}`)).status).to.equal(422);
      expect((await t.request('GET', '/billing/invoice/oldco?period=2026-13')).status).to.equal(422);
      expect((await t.request('GET', '/billing/invoice/oldco', { token: viewer.token })).status).to.equal(404);
      expect((await t.request('GET', '/billing/invoice/acme', { token: null })).status).to.equal(401);
      const inv = await t.request('GET', '/investor/report?months=3');
      expect(inv.body.paying_tenants).to.be.at.least(1);
      expect(inv.body.months).to.have.length(3);
    });
    it('saas dashboard: own tenant, 404 for another, 401', async () => {
      const r = await t.request('GET', '/saas/dashboard/acme', { token: viewer.token });
      expect(r.status).to.equal(200);
      expect(r.body.mrr).to.deep.equal({ amount: '49.00', currency: 'USD' });
      expect(r.body.users).to.equal(2);
      expect((await t.request('GET', '/saas/dashboard/globex', { token: viewer.token })).status).to.equal(404);
      expect((await t.request('GET', '/saas/dashboard/acme', { token: null })).status).to.equal(401);
    });
  });
});
