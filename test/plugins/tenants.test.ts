import { expect } from 'chai';
import tenantsPlugin from '../../plugins/tenants';
import usagePlugin from '../../plugins/usage';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

eachDatabase('tenants plugin', (db) => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ db, plugins: [tenantsPlugin, usagePlugin] });
  });
  after(() => t.stop());

  describe('GET /tenant/current', () => {
    it("shows the caller's tenant with its plan and budget", async () => {
      const v = await t.userToken('viewer', 'acme', 'pro');
      const r = await t.request('GET', '/tenant/current', { token: v.token });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ tenant_id: 'acme', plan: 'pro' });
      expect(r.body.rate_limit).to.deep.equal({ requests_per_minute: 100, window_seconds: 60 });
      expect(r.body.domains).to.deep.equal([]);
      expect((await t.request('GET', '/tenant/current', { token: null })).status).to.equal(401);
    });
  });

  describe('POST /tenant/create', () => {
    it('creates a tenant with a custom id (admin); 409 on a clash', async () => {
      const r = await t.request('POST', '/tenant/create', { body: { name: 'Globex', plan: 'free', domains: ['trading', 'llm'], tenant_id: 'globex' } });
      expect(r.status).to.equal(201);
      expect(r.body).to.include({ tenant_id: 'globex', name: 'Globex', plan: 'free' });
      expect(r.body.domains).to.deep.equal(['trading', 'llm']);
      const clash = await t.request('POST', '/tenant/create', { body: { name: 'Other', plan: 'free', domains: [], tenant_id: 'globex' } });
      expect(clash.status).to.equal(409);
      const actions = await t.host.services.actions.list({ limit: 10, action: 'create_tenant', target_id: 'globex' });
      expect(actions.actions).to.have.length(1);
    });

    it('generates a UUID id when none is given', async () => {
      const r = await t.request('POST', '/tenant/create', { body: { name: 'Initech', plan: 'enterprise', domains: [] } });
      expect(r.status).to.equal(201);
      expect(r.body.tenant_id).to.match(/^[0-9a-f-]{36}$/);
    });

    it('is for admins only', async () => {
      const op = await t.userToken('operator');
      expect((await t.request('POST', '/tenant/create', { token: op.token, body: { name: 'X', plan: 'free', domains: [] } })).status).to.equal(403);
      expect((await t.request('POST', '/tenant/create', { token: null, body: { name: 'X', plan: 'free', domains: [] } })).status).to.equal(401);
    });

    it('answers 422 for a bad id, an unknown plan or bad domains', async () => {
      const badId = await t.request('POST', '/tenant/create', { body: { name: 'X', plan: 'free', domains: [], tenant_id: 'Bad Id!' } });
      expect(badId.status).to.equal(422);
      expect(badId.body.detail[0].loc).to.deep.equal(['body', 'tenant_id']);
      const plan = await t.request('POST', '/tenant/create', { body: { name: 'X', plan: 'platinum', domains: [] } });
      expect(plan.status).to.equal(422);
      expect(plan.body.detail[0].loc).to.deep.equal(['body', 'plan']);
      expect((await t.request('POST', '/tenant/create', { body: { name: 'X', plan: 'free', domains: ['UPPER CASE'] } })).status).to.equal(422);
      expect((await t.request('POST', '/tenant/create', { body: { plan: 'free' } })).status).to.equal(422);
    });
  });

  describe('POST /billing/assign-plan', () => {
    it('changes the plan (admin) and reports the previous one', async () => {
      await t.userToken('viewer', 'umbrella', 'free');
      const r = await t.request('POST', '/billing/assign-plan', { body: { tenant_id: 'umbrella', plan: 'enterprise' } });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ tenant_id: 'umbrella', plan: 'enterprise', previous_plan: 'free' });
      expect(r.body.rate_limit.requests_per_minute).to.equal(1_000_000); // the test config's enterprise budget
      expect((await t.host.services.db('tenants').where({ id: 'umbrella' }).first()).plan).to.equal('enterprise');
    });

    it('answers 404 for an unknown tenant, 422 for an unknown plan, 403 below admin', async () => {
      expect((await t.request('POST', '/billing/assign-plan', { body: { tenant_id: 'no-such', plan: 'pro' } })).status).to.equal(404);
      expect((await t.request('POST', '/billing/assign-plan', { body: { tenant_id: 'platform', plan: 'gold' } })).status).to.equal(422);
      expect((await t.request('POST', '/billing/assign-plan', { body: { tenant_id: 'platform' } })).status).to.equal(422);
      const member = await t.userToken('member');
      expect((await t.request('POST', '/billing/assign-plan', { token: member.token, body: { tenant_id: 'platform', plan: 'free' } })).status).to.equal(403);
    });
  });

  describe('GET /tenant/features/{tenant_id}', () => {
    it("lists what the plan enables for one's own tenant", async () => {
      const v = await t.userToken('viewer', 'hooli', 'free');
      const r = await t.request('GET', '/tenant/features/hooli', { token: v.token });
      expect(r.status).to.equal(200);
      expect(r.body.plan).to.equal('free');
      expect(r.body.enabled).to.include('api').and.not.include('chaos');
      expect(r.body.features).to.include({ api: true, chaos: false, compliance: false });
      expect(r.body.rate_limit.requests_per_minute).to.equal(10);
    });

    it("answers 404 for another tenant's id (unless admin), and for an unknown tenant", async () => {
      const v = await t.userToken('operator', 'hooli', 'free');
      expect((await t.request('GET', '/tenant/features/platform', { token: v.token })).status).to.equal(404);
      expect((await t.request('GET', '/tenant/features/no-such-tenant', { token: v.token })).status).to.equal(404);
      const asAdmin = await t.request('GET', '/tenant/features/hooli');
      expect(asAdmin.status).to.equal(200);
      expect((await t.request('GET', '/tenant/features/no-such-tenant')).status).to.equal(404);
      expect((await t.request('GET', '/tenant/features/hooli', { token: null })).status).to.equal(401);
      expect((await t.request('GET', `/tenant/features/${'x'.repeat(80)}`)).status).to.equal(422);
    });
  });
});
