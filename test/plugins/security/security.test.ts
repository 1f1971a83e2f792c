import { expect } from 'chai';
import { core } from '../../../core/services';
import auth from '../../../plugins/auth';
import secsuite from '../../../plugins/secsuite';
import security from '../../../plugins/security';
import { eventually } from '../../helpers/eventually';
import { startHost, type TestHost } from '../../helpers/host';

const PASSWORD = 'a-long-test-password-1';
const HOUR = 3_600_000;

describe('security plugin (/security)', () => {
  let t: TestHost;
  /** Test clock: real time plus an offset the predictive test moves back and forth. */
  const clock = { offset: 0, now: () => new Date(Date.now() + clock.offset) };
  let op: string;
  let viewer: { token: string; userId: string; email: string };
  let member: string;
  let acme: { token: string; userId: string; tenantId: string; email: string };
  let acmeOp: string;
  before(async () => {
    t = await startHost({
      plugins: [auth, security, secsuite],
      overrides: [[core.clock, clock]],
      // Logins are not throttled before the brute-force rule acts, so that the lock is what refuses the good password.
      config: { auth: { loginThrottle: { accountFailures: 100, addressFailures: 100 } } },
    });
    op = (await t.userToken('operator')).token;
    viewer = await t.userToken('viewer');
    member = (await t.userToken('member')).token;
    acme = await t.userToken('member', 'acme-sec');
    acmeOp = (await t.userToken('operator', 'acme-sec')).token;
  });
  after(() => t.stop());

  const login = (email: string, password: string) => t.request('POST', '/auth/login', { token: null, body: { email, password }, headers: { 'x-forwarded-for': '10.66.0.7' } });

  describe('brute force: event → finding → automatic lock → action', () => {
    let lockId: string;
    it('records each failed login, raises a finding at the threshold and locks the account', async () => {
      for (let i = 0; i < 8; i++) expect((await login(acme.email, 'wrong-password-1')).status).to.equal(401);
      const events = await eventually(async () => {
        const r = await t.request('GET', `/security/events?tenant_id=acme-sec&category=auth.login_failed`);
        return r.body.events.length === 8 && r.body.events;
      });
      expect(events[0]).to.include({ tenant_id: 'acme-sec', source: 'auth', severity: 'low', actor: acme.email, address: '10.66.0.7' });
      // Resolved by the lock in the same evaluation step; poll until the step has finished.
      const finding = await eventually(async () => (await t.request('GET', '/security/findings?rule_id=auth-brute-force-account&tenant_id=acme-sec&state=resolved')).body.findings[0]);
      expect(finding).to.include({ subject: acme.email, severity: 'high', rule_version: 1, state: 'resolved' });
      expect(finding.evidence).to.have.members(events.map((e: { id: string }) => e.id));
      const actions = (await t.request('GET', `/security/actions?finding_id=${finding.id}`)).body.actions;
      expect(actions).to.have.length(1);
      expect(actions[0]).to.include({ action: 'lock_account', target_type: 'user', target_id: acme.userId, trigger: 'rule', result: 'succeeded', undoable: true, tenant_id: 'acme-sec' });
      expect(finding.resolved_by).to.equal(actions[0].id);
      lockId = actions[0].id;
      // The platform action log has it too, as an automated action.
      const log = await t.host.services.db('actions').where({ action: 'lock_account', target_id: acme.userId }).first();
      expect(log).to.include({ source: 'automated', actor: 'security', cause: finding.id });
    });

    it('refuses the right password while locked, and revoked the tokens issued before', async () => {
      const r = await login(acme.email, PASSWORD);
      expect(r.status).to.equal(403);
      expect(r.body.code).to.equal('ACCOUNT_LOCKED');
      expect((await t.request('GET', '/security/events', { token: acme.token })).status).to.equal(401);
    });

    it('an operator undoes the lock (409 the second time); the user logs in again', async () => {
      expect((await t.request('POST', `/security/actions/${lockId}/undo`, { token: member })).status).to.equal(403);
      const u = await t.request('POST', `/security/actions/${lockId}/undo`, { token: acmeOp });
      expect(u.status).to.equal(200);
      expect(u.body.undone_at).to.be.a('string');
      const again = await t.request('POST', `/security/actions/${lockId}/undo`, { token: acmeOp });
      expect(again.status).to.equal(409);
      expect(again.body.code).to.equal('INVALID_STATE');
      expect((await t.request('POST', `/security/actions/${lockId}/undo`, { token: op })).status).to.equal(404); // another tenant's
      const back = await login(acme.email, PASSWORD);
      expect(back.status).to.equal(200);
      acme.token = back.body.token; // the lock revoked the tokens issued before it
    });
  });

  describe('GET /security/events', () => {
    it('filters by severity and kernel, pages with a cursor, and answers 422 for bad filters', async () => {
      const r = await t.request('GET', '/security/events?tenant_id=acme-sec&severity=low&limit=3');
      expect(r.status).to.equal(200);
      expect(r.body.events).to.have.length(3);
      expect(r.body.events.every((e: { severity: string }) => e.severity === 'low')).to.equal(true);
      const next = await t.request('GET', `/security/events?tenant_id=acme-sec&severity=low&limit=3&cursor=${r.body.next_cursor}`);
      expect(next.body.events.map((e: { id: string }) => e.id)).to.not.include.members(r.body.events.map((e: { id: string }) => e.id));
      expect((await t.request('GET', '/security/events?kernel_id=trading')).body.events).to.deep.equal([]);
      expect((await t.request('GET', '/security/events?severity=urgent')).status).to.equal(422);
      expect((await t.request('GET', '/security/events?limit=0')).status).to.equal(422);
      expect((await t.request('GET', '/security/events?cursor=bad')).status).to.equal(422);
      expect((await t.request('GET', '/security/events?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z')).status).to.equal(422);
    });

    it('keeps tenants apart: 401 without a token, own tenant only, 404 naming another', async () => {
      expect((await t.request('GET', '/security/events', { token: null })).status).to.equal(401);
      const own = await t.request('GET', '/security/events', { token: viewer.token });
      expect(own.status).to.equal(200);
      expect(own.body.events.every((e: { tenant_id: string }) => e.tenant_id === 'platform')).to.equal(true);
      const other = await t.request('GET', '/security/events?tenant_id=acme-sec', { token: viewer.token });
      expect(other.status).to.equal(404);
      expect(other.body.code).to.equal('TENANT_NOT_FOUND');
    });
  });

  describe('findings: privilege probing opens one; acknowledge then resolve', () => {
    let id: string;
    it('five calls above the role raise an open finding', async () => {
      for (let i = 0; i < 5; i++) expect((await t.request('POST', '/security/predictive-analysis/run', { token: viewer.token, body: {} })).status).to.equal(403);
      const f = await eventually(async () => (await t.request('GET', '/security/findings?rule_id=http-privilege-probing&state=open')).body.findings[0]);
      expect(f).to.include({ subject: viewer.userId, tenant_id: 'platform', severity: 'medium' });
      expect(f.evidence).to.have.length(5);
      id = f.id;
    });

    it('moves open → acknowledged → resolved; other moves 409; other tenant 404; roles enforced', async () => {
      expect((await t.request('POST', `/security/findings/${id}/acknowledge`, { token: member, body: {} })).status).to.equal(403);
      expect((await t.request('POST', `/security/findings/${id}/acknowledge`, { token: acmeOp, body: {} })).status).to.equal(404);
      const a = await t.request('POST', `/security/findings/${id}/acknowledge`, { token: op, body: {} });
      expect(a.status).to.equal(200);
      expect(a.body.state).to.equal('acknowledged');
      const twice = await t.request('POST', `/security/findings/${id}/acknowledge`, { token: op, body: {} });
      expect(twice.status).to.equal(409);
      expect(twice.body.allowed_actions).to.deep.equal(['resolve']);
      const r = await t.request('POST', `/security/findings/${id}/resolve`, { token: op, body: { note: 'training account' } });
      expect(r.body).to.include({ state: 'resolved', resolved_by: (await t.request('GET', '/auth/me', { token: op })).body.id });
      expect((await t.request('GET', '/security/findings?state=urgent')).status).to.equal(422);
      expect((await t.request('GET', '/security/findings', { token: null })).status).to.equal(401);
      expect((await t.request('GET', '/security/findings?tenant_id=platform', { token: acme.token })).status).to.equal(404);
    });
  });

  describe('GET /security/actions and POST /security/actions', () => {
    it('isolates a mesh node (paused) and undoes it (resumed)', async () => {
      const r = await t.request('POST', '/security/actions', { token: op, body: { action: 'isolate_node', node_id: 'trading-1', reason: 'test' } });
      expect(r.status).to.equal(201);
      expect(r.body).to.include({ action: 'isolate_node', target_id: 'trading-1', trigger: 'operator', result: 'succeeded' });
      expect(t.host.services.mesh.node('trading-1').state).to.equal('paused');
      expect((await t.request('POST', '/security/actions', { token: op, body: { action: 'isolate_node', node_id: 'trading-1' } })).status).to.equal(409);
      expect((await t.request('POST', `/security/actions/${r.body.id}/undo`, { token: op })).status).to.equal(200);
      expect(t.host.services.mesh.node('trading-1').state).to.equal('active');
      expect((await t.request('POST', '/security/actions', { token: op, body: { action: 'isolate_node', node_id: 'nope-9' } })).status).to.equal(404);
      expect((await t.request('POST', '/security/actions', { token: acmeOp, body: { action: 'isolate_node', node_id: 'trading-1' } })).status).to.equal(404);
    });

    it('disables a user of the tenant: login refused; 404 for another tenant\'s user; 422; 403', async () => {
      const victim = await t.userToken('viewer', 'acme-sec');
      const r = await t.request('POST', '/security/actions', { token: acmeOp, body: { action: 'disable_user', user: victim.email } });
      expect(r.status).to.equal(201);
      expect((await login(victim.email, PASSWORD)).body.code).to.equal('ACCOUNT_DISABLED');
      expect((await t.request('POST', '/security/actions', { token: acmeOp, body: { action: 'disable_user', user: viewer.email } })).status).to.equal(404);
      expect((await t.request('POST', '/security/actions', { token: acmeOp, body: { action: 'explode', user: victim.email } })).status).to.equal(422);
      expect((await t.request('POST', '/security/actions', { token: acme.token, body: { action: 'revoke_sessions', user: victim.email } })).status).to.equal(403);
      const list = await t.request('GET', '/security/actions?action=disable_user', { token: acme.token });
      expect(list.body.actions.map((a: { id: string }) => a.id)).to.include(r.body.id);
      expect((await t.request('GET', '/security/actions?action=disable_user', { token: viewer.token })).body.actions).to.deep.equal([]);
      expect((await t.request('GET', '/security/actions?limit=5000')).status).to.equal(422);
      expect((await t.request('GET', '/security/actions', { token: null })).status).to.equal(401);
    });
  });

  describe('predictive analysis on the analytics kernel', () => {
    it('fits a rising category, raises an alert with the model and its error', async () => {
      const key = (await t.request('POST', '/secsuite/endpointsec/keys', { token: acmeOp, body: { name: 'predictive' } })).body.key;
      const base = Date.now() - 24 * HOUR;
      try {
        for (let h = 0; h < 24; h++) {
          clock.offset = base + h * HOUR + 60_000 - Date.now();
          if (!h) continue;
          // A rising, not quite linear, hourly count (h + h mod 3), so that the fit has an error.
          const items = Array.from({ length: h + (h % 3) }, () => ({ device_id: 'pc-1', type: 'process', severity: 'medium' }));
          expect((await t.request('POST', '/secsuite/endpointsec/events', { token: null, headers: { 'x-integration-key': key }, body: { items } })).status).to.equal(201);
        }
      } finally {
        clock.offset = 0;
      }
      const run = await t.request('POST', '/security/predictive-analysis/run', { token: acme.token, body: { window_hours: 24, categories: ['endpoint.event'] } });
      expect(run.status).to.equal(202);
      expect(run.body.state).to.equal('queued');
      const done = await eventually(async () => {
        const r = await t.request('GET', `/security/predictive-analysis/${run.body.id}`, { token: acme.token });
        return r.body.state === 'succeeded' && r.body;
      }, 20_000);
      const model = done.result.models[0];
      expect(model).to.include({ category: 'endpoint.event', events: 300, method: 'holt', alert: true });
      expect(model.rmse).to.be.a('number').and.greaterThan(0);
      expect(model.peak).to.be.greaterThan(model.threshold);
      const alerts = (await t.request('GET', '/security/predictive-alerts', { token: acme.token })).body.alerts;
      expect(alerts).to.have.length(1);
      expect(alerts[0]).to.include({ category: 'endpoint.event', run_id: run.body.id });
      expect(alerts[0].model).to.include({ method: 'holt' });
      expect((await t.request('GET', '/security/predictive-alerts', { token: viewer.token })).body.alerts).to.deep.equal([]);
      expect((await t.request('GET', `/security/predictive-analysis/${run.body.id}`, { token: viewer.token })).status).to.equal(404);
    });

    it('checks input and role', async () => {
      expect((await t.request('POST', '/security/predictive-analysis/run', { token: member, body: { bucket_minutes: 1 } })).status).to.equal(422);
      expect((await t.request('POST', '/security/predictive-analysis/run', { token: null, body: {} })).status).to.equal(401);
      expect((await t.request('GET', '/security/predictive-alerts', { token: null })).status).to.equal(401);
      expect((await t.request('GET', '/security/predictive-alerts?limit=-1')).status).to.equal(422);
    });
  });

  describe('GET /security/metrics and /security/tenant_report/{tenant_id}', () => {
    it('counts by severity and category, with MTTD and MTTR from the brute-force finding', async () => {
      const r = await t.request('GET', '/security/metrics?tenant_id=acme-sec');
      expect(r.status).to.equal(200);
      expect(r.body.events.by_severity.low).to.be.at.least(8);
      expect(r.body.events.by_category.find((c: { category: string }) => c.category === 'auth.login_failed').count).to.equal(8);
      expect(r.body.findings.rules_firing).to.deep.include({ rule_id: 'auth-brute-force-account', count: 1 });
      expect(r.body.mttd_seconds.count).to.equal(1);
      expect(r.body.mttr_seconds.count).to.equal(1);
      expect(r.body.mttd_seconds.method).to.be.a('string');
      expect((await t.request('GET', '/security/metrics?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z')).status).to.equal(422);
      expect((await t.request('GET', '/security/metrics', { token: null })).status).to.equal(401);
      expect((await t.request('GET', '/security/metrics?tenant_id=acme-sec', { token: viewer.token })).status).to.equal(404);
      const empty = await t.request('GET', '/security/metrics', { token: (await t.userToken('viewer', 'empty-sec')).token });
      expect(empty.body.events.total).to.equal(0);
      expect(empty.body.mttd_seconds).to.include({ count: 0, mean: null });
    });

    it("reports a tenant's posture: findings, actions, keys and users without a recent login", async () => {
      const r = await t.request('GET', '/security/tenant_report/acme-sec', { token: acme.token });
      expect(r.status).to.equal(200);
      expect(r.body.actions.map((a: { action: string }) => a.action)).to.include.members(['lock_account', 'disable_user']);
      const emails = r.body.users_without_recent_login.map((u: { email: string }) => u.email);
      expect(emails).to.not.include(acme.email); // logged in after the unlock
      expect(r.body.users_without_recent_login.length).to.be.greaterThan(0);
      expect(r.body.exposed_keys).to.deep.equal([]); // the key is fresh and in use
      expect((await t.request('GET', '/security/tenant_report/acme-sec', { token: viewer.token })).status).to.equal(404);
      expect((await t.request('GET', '/security/tenant_report/no-such-tenant')).status).to.equal(404);
      expect((await t.request('GET', '/security/tenant_report/acme-sec')).status).to.equal(200); // admin
      expect((await t.request('GET', '/security/tenant_report/acme-sec', { token: null })).status).to.equal(401);
    });
  });
});
