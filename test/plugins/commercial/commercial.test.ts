import { expect } from 'chai';
import zlib from 'node:zlib';
import { eventually } from '../../helpers/eventually';
import { startHost, type TestHost } from '../../helpers/host';
import { billingPlugins } from '../billing/plugins';

// The 4.19 commercial and customer endpoints: success, auth, bad input, state, isolation.
describe('billing: commercial and customer endpoints', () => {
  let t: TestHost;
  let viewer: { token: string };
  let member: { token: string };
  let other: { token: string };

  before(async () => {
    t = await startHost({ plugins: billingPlugins, config: { billing: { usageFlushMs: 20 } } });
    viewer = await t.userToken('viewer', 'ent-co', 'enterprise');
    // A customer since the start of the month: a whole month's plan fee.
    const now = new Date();
    await t.host.services.db('tenants').where({ id: 'ent-co' }).update({ created_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString() });
    member = await t.userToken('member', 'ent-co', 'enterprise');
    other = await t.userToken('viewer', 'rival', 'enterprise');
    // Some use to measure.
    for (let i = 0; i < 3; i++) await t.request('GET', '/tenant/current', { token: member.token });
  });
  after(() => t.stop());

  describe('SLA', () => {
    const sla = { tenant_id: 'ent-co', availability: 0.999, latency_p95_ms: 500, support_response_minutes: 60 };
    it('defines an SLA (admins) and reports the month against it', async () => {
      const d = await t.request('POST', '/sla/define', { body: sla });
      expect(d.status).to.equal(201);
      expect(d.body.credits).to.have.length(3);
      const r = await eventually(async () => {
        const x = await t.request('GET', '/sla/report/ent-co', { token: viewer.token });
        return x.body.measured?.requests >= 3 ? x : null;
      });
      expect(r.status).to.equal(200);
      expect(r.body.measured.availability).to.equal(1);
      expect(r.body.met.availability).to.equal(true);
      expect(r.body.credit).to.deep.equal({ amount: '0.00', currency: 'USD' });
      expect(r.body.method).to.be.a('string');
    });
    it('owes a credit when availability falls under the tiers', async () => {
      const db = t.host.services.db;
      const hour = new Date().toISOString().slice(0, 13);
      await db('usage_counters').insert({ tenant_id: 'ent-co', key_id: '', metric: 'request_errors', dimension: 'x', hour, quantity: 1 });
      await db('usage_counters').insert({ tenant_id: 'ent-co', key_id: '', metric: 'requests', dimension: 'x', hour, quantity: 1 });
      const r = await t.request('GET', '/sla/report/ent-co', { token: viewer.token });
      expect(r.body.met.availability).to.equal(false);
      expect(r.body.credit_percent).to.be.at.least(10);
      // The enterprise fee accrued so far this month (of 499.00) x the tier's percentage.
      const fee = Math.round(Number(r.body.plan_fee.amount) * 100);
      expect(fee).to.be.within(1, 49900);
      expect(Math.round(Number(r.body.credit.amount) * 100)).to.equal(Math.round((fee * r.body.credit_percent) / 100));
    });
    it('401, 403 for non-admins, 422 bad input, 404 unknown or another tenant', async () => {
      expect((await t.request('POST', '/sla/define', { token: null, body: sla })).status).to.equal(401);
      expect((await t.request('POST', '/sla/define', { token: member.token, body: sla })).status).to.equal(403);
      expect((await t.request('POST', '/sla/define', { body: { ...sla, availability: 1.5 } })).status).to.equal(422);
      expect((await t.request('POST', '/sla/define', { body: { ...sla, credits: [{ below: 0.9999, credit_percent: 5 }] } })).status).to.equal(422);
      expect((await t.request('POST', '/sla/define', { body: { ...sla, tenant_id: 'nobody' } })).status).to.equal(404);
      expect((await t.request('GET', '/sla/report/ent-co', { token: other.token })).status).to.equal(404);
      expect((await t.request('GET', '/sla/report/ent-co?period=2026-1', { token: viewer.token })).status).to.equal(422);
      expect((await t.request('GET', '/sla/report/ent-co', { token: null })).status).to.equal(401);
    });
  });

  describe('provisioning', () => {
    const plan = {
      customer_name: 'Initech', tenant_id: 'initech', plan: 'pro', admin: { email: 'boss@initech.test', name: 'Boss' },
      api_keys: [{ name: 'ci', scopes: ['execute'] }], kernel_quotas: { trading: 1000 },
      starter_workflows: [{ name: 'hello', steps: [{ id: 'a', kernel: 'analytics', task: 'describe', input: { values: [1] } }] }],
    };
    it('creates a plan and executes it step by step; running again is safe', async () => {
      const c = await t.request('POST', '/commercial/provisioning/create', { body: plan });
      expect(c.status).to.equal(201);
      expect(c.body.state).to.equal('draft');
      const x = await t.request('POST', `/commercial/provisioning/${c.body.id}/execute`);
      expect(x.status).to.equal(200);
      expect(x.body.state).to.equal('succeeded');
      expect(x.body.steps.map((s: { state: string }) => s.state)).to.deep.equal(Array(6).fill('succeeded'));
      expect(x.body.api_key_secrets.ci).to.match(/^pk_/);
      const y = await t.request('POST', `/commercial/provisioning/${c.body.id}/execute`);
      expect(y.body.state).to.equal('succeeded');
      expect(y.body.runs).to.equal(2);
      expect(y.body.api_key_secrets).to.deep.equal({});
      expect(y.body.steps[0].result).to.deep.equal({ tenant_id: 'initech', created: false });
      const db = t.host.services.db;
      expect((await db('tenants').where({ id: 'initech' }).first()).plan).to.equal('pro');
      expect(await db('users').where({ tenant_id: 'initech' })).to.have.length(1);
      expect(await db('api_keys').where({ tenant_id: 'initech' })).to.have.length(1);
      expect(await db('workflow_definitions').where({ tenant_id: 'initech' })).to.have.length(1);
    });
    it('a kernel quota refuses the day\'s tasks past it with 429 KERNEL_QUOTA', async () => {
      const c = await t.request('POST', '/commercial/provisioning/create', { body: { ...plan, tenant_id: 'quota-co', admin: { email: 'q@quota.test', name: 'Q' }, api_keys: [], starter_workflows: [], kernel_quotas: { analytics: 2 } } });
      const x = await t.request('POST', `/commercial/provisioning/${c.body.id}/execute`);
      expect(x.body.state).to.equal('succeeded');
      const q = await t.userToken('member', 'quota-co');
      for (let i = 0; i < 2; i++) expect((await t.request('POST', '/kernels/analytics/tasks/describe', { token: q.token, body: { values: [1] } })).status).to.equal(200);
      const over = await eventually(async () => {
        const r = await t.request('POST', '/kernels/analytics/tasks/describe', { token: q.token, body: { values: [1] } });
        return r.status === 429 ? r : null;
      });
      expect(over.body.code).to.equal('KERNEL_QUOTA');
      expect(Number(over.headers.get('retry-after'))).to.be.greaterThan(0);
      // Wherever the tenant's tasks start: a workflow's step is refused the same way.
      const wf = await t.request('POST', '/workflows', { token: q.token, body: { name: 'one', steps: [{ id: 'a', kernel: 'analytics', task: 'describe', input: { values: [1] } }] } });
      const run = await t.request('POST', `/workflows/${wf.body.id}/run`, { token: q.token });
      expect(run.status).to.equal(202);
      const ended = await eventually(async () => {
        const e = await t.request('GET', `/ops/workflows/${run.body.id}`, { token: q.token });
        return e.body.state === 'failed' ? e.body : null;
      });
      expect(ended.steps[0].error).to.contain('Kernel quota reached: 2 analytics tasks a day');
      // Another kernel, and another tenant, are not limited by it.
      expect((await t.request('POST', '/kernels/trading/tasks/price_option', { token: q.token, body: { type: 'call', spot: 100, strike: 100, rate: 0.01, volatility: 0.2, time_years: 1 } })).status).to.equal(200);
      expect((await t.request('POST', '/kernels/analytics/tasks/describe', { token: member.token, body: { values: [1] } })).status).to.equal(200);
    });

    it('a failing step stops the run with its error', async () => {
      const c = await t.request('POST', '/commercial/provisioning/create', { body: { ...plan, tenant_id: 'initech-2', admin: { email: 'boss@initech.test', name: 'B' } } });
      const x = await t.request('POST', `/commercial/provisioning/${c.body.id}/execute`);
      expect(x.body.state).to.equal('failed');
      expect(x.body.steps[2]).to.include({ name: 'create_admin_user', state: 'failed' });
      expect(x.body.steps[3].state).to.equal('pending');
    });
    it('401, 403, 422, 404, 409 while running', async () => {
      expect((await t.request('POST', '/commercial/provisioning/create', { token: null, body: plan })).status).to.equal(401);
      expect((await t.request('POST', '/commercial/provisioning/create', { token: member.token, body: plan })).status).to.equal(403);
      expect((await t.request('POST', '/commercial/provisioning/create', { body: { ...plan, plan: 'gold' } })).status).to.equal(422);
      expect((await t.request('POST', '/commercial/provisioning/create', { body: { ...plan, kernel_quotas: { nope: 1 } } })).status).to.equal(422);
      expect((await t.request('POST', '/commercial/provisioning/00000000-0000-4000-8000-000000000000/execute')).status).to.equal(404);
      const c = await t.request('POST', '/commercial/provisioning/create', { body: { ...plan, tenant_id: 'initech-3', admin: { email: 'x3@initech.test', name: 'X' } } });
      await t.host.services.db('provisioning_plans').where({ id: c.body.id }).update({ state: 'running' });
      const busy = await t.request('POST', `/commercial/provisioning/${c.body.id}/execute`);
      expect(busy.status).to.equal(409);
      expect(busy.body.state).to.equal('running');
    });
  });

  describe('health, status, lifecycle, success, ROI, POV', () => {
    it('production health of one\'s tenant; 404 for another; 401', async () => {
      const r = await t.request('GET', '/commercial/production/health/ent-co', { token: viewer.token });
      expect(r.status).to.equal(200);
      expect(r.body.kernels.length).to.be.greaterThan(0);
      expect(r.body.status).to.be.oneOf(['degraded', 'unhealthy']); // the error injected above
      expect((await t.request('GET', '/commercial/production/health/ent-co', { token: other.token })).status).to.equal(404);
      expect((await t.request('GET', '/commercial/production/health/ent-co?window_minutes=5', { token: viewer.token })).status).to.equal(422);
      expect((await t.request('GET', '/commercial/production/health/ent-co', { token: null })).status).to.equal(401);
    });
    it('global status is public and lists every kernel', async () => {
      const r = await t.request('GET', '/global/status', { token: null });
      expect(r.status).to.equal(200);
      expect(r.body.components.map((c: { name: string }) => c.name)).to.include.members(['api', 'database', 'kernel:trading', 'kernel:llm', 'kernel:analytics']);
      expect(r.body.incidents).to.deep.equal([]);
    });
    it('lifecycle, success, success dashboard: at risk with the errors above, onboarding when new; 404 for another; 401', async () => {
      for (const p of ['/customer/lifecycle/ent-co', '/customer/success/ent-co', '/customer/ent-co/success_dashboard']) {
        const r = await t.request('GET', p, { token: viewer.token });
        expect(r.status, p).to.equal(200);
        // Older than 14 days (since the month began), and 1 error in a handful of requests: over 5%.
        expect(r.body.stage, p).to.equal('at_risk');
        expect((await t.request('GET', p.replace('ent-co', 'rival'), { token: viewer.token })).status, p).to.equal(404);
        expect((await t.request('GET', p, { token: null })).status, p).to.equal(401);
      }
      const fresh = await t.userToken('viewer', 'fresh-co', 'pro');
      expect((await t.request('GET', '/customer/lifecycle/fresh-co', { token: fresh.token })).body.stage).to.equal('onboarding');
      const s = await t.request('GET', '/customer/success/ent-co', { token: viewer.token });
      expect(s.body.signals.error_rate_7d).to.be.greaterThan(0.05);
      expect(s.body.health.score).to.be.within(0, 100);
      expect(s.body.health.components.reliability).to.be.lessThan(100);
      expect(s.body.signals.activity_7d).to.be.greaterThan(0);
      const d = await t.request('GET', '/customer/ent-co/success_dashboard', { token: viewer.token });
      expect(d.body.daily).to.have.length(30);
    });
    it('ROI: spend against work delivered; 422, 404, 401', async () => {
      const r = await t.request('GET', '/customer/ent-co/roi', { token: viewer.token });
      expect(r.status).to.equal(200);
      expect(r.body.spend.currency).to.equal('USD');
      expect(r.body.delivered.requests).to.be.greaterThan(0);
      expect((await t.request('GET', '/customer/ent-co/roi?days=0', { token: viewer.token })).status).to.equal(422);
      expect((await t.request('GET', '/customer/rival/roi', { token: viewer.token })).status).to.equal(404);
      expect((await t.request('GET', '/customer/ent-co/roi', { token: null })).status).to.equal(401);
    });
    it('POV report: what exists for the tenant; 404 for another', async () => {
      const r = await t.request('GET', '/pov/report/ent-co', { token: viewer.token });
      expect(r.status).to.equal(200);
      expect(r.body.pov_deployments).to.deep.equal([]);
      expect((await t.request('GET', '/pov/report/rival', { token: viewer.token })).status).to.equal(404);
      expect((await t.request('GET', '/pov/report/ent-co', { token: null })).status).to.equal(401);
    });
  });

  describe('ROI experiments', () => {
    it('trading: two variants run on the kernel, the difference comes with a Welch interval', async () => {
      const r = await t.request('POST', '/customer/roi/experiments/trading/start', {
        token: member.token,
        body: { samples: 5, metric: 'var', variant_a: { positions: [{ symbol: 'A', value: 1000, mu: 0, sigma: 0.2 }], paths: 200, seed: 1 }, variant_b: { positions: [{ symbol: 'A', value: 1000, mu: 0, sigma: 0.4 }], paths: 200, seed: 1 } },
      });
      expect(r.status).to.equal(202);
      expect(r.body.state).to.equal('queued');
      const done = await eventually(async () => {
        const x = await t.request('GET', `/customer/roi/experiments/${r.body.id}`, { token: viewer.token });
        return ['succeeded', 'failed'].includes(x.body.state) ? x.body : null;
      }, 20_000);
      expect(done.state, done.error).to.equal('succeeded');
      expect(done.result.method).to.equal('welch_t_interval');
      expect(done.result.a.n).to.equal(5);
      // Twice the volatility: a larger VaR, the whole interval above zero.
      expect(done.result.ci_low).to.be.greaterThan(0);
      expect((await t.request('GET', `/customer/roi/experiments/${r.body.id}`, { token: other.token })).status).to.equal(404);
    });
    it('support: latency of two similarity settings', async () => {
      const r = await t.request('POST', '/customer/roi/experiments/support/start', {
        token: member.token, body: { samples: 3, variant_a: { query: 'reset password', documents: ['how to reset a password', 'billing'] }, variant_b: { query: 'reset password', documents: ['how to reset a password', 'billing'], dimensions: 1024 } },
      });
      expect(r.status).to.equal(202);
      const done = await eventually(async () => {
        const x = await t.request('GET', `/customer/roi/experiments/${r.body.id}`, { token: viewer.token });
        return ['succeeded', 'failed'].includes(x.body.state) ? x.body : null;
      }, 20_000);
      expect(done.state, done.error).to.equal('succeeded');
      expect(done.result.ci_low).to.be.at.most(done.result.ci_high);
    });
    it('422 for bad variants or tasks, 403 for viewers, 401', async () => {
      const bad = await t.request('POST', '/customer/roi/experiments/trading/start', { token: member.token, body: { variant_a: { positions: [] }, variant_b: {} } });
      expect(bad.status).to.equal(422);
      expect((await t.request('POST', '/customer/roi/experiments/trading/start', { token: member.token, body: { task: 'nope', variant_a: {}, variant_b: {} } })).status).to.equal(422);
      expect((await t.request('POST', '/customer/roi/experiments/support/start', { token: viewer.token, body: { variant_a: {}, variant_b: {} } })).status).to.equal(403);
      expect((await t.request('POST', '/customer/roi/experiments/support/start', { token: null, body: { variant_a: {}, variant_b: {} } })).status).to.equal(401);
      expect((await t.request('POST', '/customer/roi/experiments/support/start', { token: member.token, body: { tenant_id: 'rival', variant_a: {}, variant_b: {} } })).status).to.equal(404);
    });
  });

  describe('GTM', () => {
    it('enriches a lead from the tenant of its domain; 503 for outside enrichment not configured', async () => {
      await t.host.services.db('tenants').where({ id: 'ent-co' }).update({ domains: JSON.stringify(['ent.example']) });
      const r = await t.request('POST', '/gtm/enrich_lead', { body: { email: 'cfo@ent.example' } });
      expect(r.status).to.equal(200);
      expect(r.body.tenant).to.include({ tenant_id: 'ent-co', plan: 'enterprise', matched_by: 'tenant_domain' });
      const none = await t.request('POST', '/gtm/enrich_lead', { body: { email: 'a@unknown.example' } });
      expect(none.body.tenant).to.equal(null);
      const ext = await t.request('POST', '/gtm/enrich_lead', { body: { email: 'a@unknown.example', external: true } });
      expect(ext.status).to.equal(503);
      expect(ext.body.code).to.equal('NOT_CONFIGURED');
      expect(ext.body.detail).to.include('commercial.enrichmentUrl');
      expect((await t.request('POST', '/gtm/enrich_lead', { body: { email: 'not-an-email' } })).status).to.equal(422);
      expect((await t.request('POST', '/gtm/enrich_lead', { token: member.token, body: { email: 'a@b.example' } })).status).to.equal(403);
      expect((await t.request('POST', '/gtm/enrich_lead', { token: null, body: { email: 'a@b.example' } })).status).to.equal(401);
    });
    it('prices every plan for the expected use and writes the proposal from the template without an LLM', async () => {
      const r = await t.request('POST', '/gtm/generate_proposal', { body: { company: 'Umbrella', expected_usage: { requests_per_month: 1_000_000 }, features_needed: ['sla'] } });
      expect(r.status).to.equal(200);
      expect(r.body.document.wording).to.equal('template');
      // pro + sla add-on: 49.00 + 199.00 + 1,000,000 requests x 0.05/1000 = 50.00 -> 298.00; enterprise: 499.00 + 20.00.
      expect(r.body.recommendation).to.deep.include({ plan: 'pro', addons: ['sla'], monthly: { amount: '298.00', currency: 'USD' } });
      expect(r.body.document.text).to.include('298.00');
      expect((await t.request('POST', '/gtm/generate_proposal', { body: { company: 'U', features_needed: ['teleportation'] } })).status).to.equal(422);
      expect((await t.request('POST', '/gtm/generate_proposal', { body: { company: '' } })).status).to.equal(422);
      expect((await t.request('POST', '/gtm/generate_proposal', { token: member.token, body: { company: 'U' } })).status).to.equal(403);
    });
  });

  describe('compliance export', () => {
    it("exports every table the tenant owns with checksums, without credential hashes; downloadable; logged", async () => {
      const r = await t.request('POST', '/compliance/export/ent-co');
      expect(r.status).to.equal(201);
      const tables = r.body.tables.map((x: { table: string }) => x.table);
      expect(tables).to.include.members(['users', 'usage_counters', 'sla_definitions']);
      const users = r.body.tables.find((x: { table: string }) => x.table === 'users');
      expect(users.rows).to.equal(2);
      expect(users.omitted_columns).to.deep.equal(['password_hash']);
      const file = await fetch(t.url + r.body.download_url, { headers: { authorization: `Bearer ${t.adminToken}` } });
      expect(file.status).to.equal(200);
      const tar = zlib.gunzipSync(Buffer.from(await file.arrayBuffer())).toString('latin1');
      expect(tar).to.include('manifest.json');
      expect(tar).not.to.include('$argon2');
      const logged = await t.host.services.actions.list({ limit: 5, action: 'compliance_export' });
      expect(logged.actions).to.have.length(1);
    });
    it('401, 403 for non-admins, 404 for an unknown tenant', async () => {
      expect((await t.request('POST', '/compliance/export/ent-co', { token: null })).status).to.equal(401);
      expect((await t.request('POST', '/compliance/export/ent-co', { token: member.token })).status).to.equal(403);
      expect((await t.request('POST', '/compliance/export/nobody')).status).to.equal(404);
    });
  });

  describe('feature toggle', () => {
    it('admins only; 404 unknown tenant; 422 bad feature name', async () => {
      expect((await t.request('POST', '/saas/features/ent-co/toggle', { token: member.token, body: { feature: 'sla', enabled: false } })).status).to.equal(403);
      expect((await t.request('POST', '/saas/features/ent-co/toggle', { token: null, body: { feature: 'sla', enabled: false } })).status).to.equal(401);
      expect((await t.request('POST', '/saas/features/nobody/toggle', { body: { feature: 'sla', enabled: false } })).status).to.equal(404);
      expect((await t.request('POST', '/saas/features/ent-co/toggle', { body: { feature: 'Bad Name', enabled: false } })).status).to.equal(422);
      const cleared = await t.request('POST', '/saas/features/ent-co/toggle', { body: { feature: 'sla', enabled: null } });
      expect(cleared.status).to.equal(200);
      expect(cleared.body.overrides).to.deep.equal({});
    });
  });
});
