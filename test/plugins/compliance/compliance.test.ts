import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import compliance from '../../../plugins/compliance';
import incidents from '../../../plugins/incidents';
import { startHost, type TestHost } from '../../helpers/host';

describe('compliance controls, verification and report', () => {
  let t: TestHost;
  let op: string;
  let viewer: string;
  let acmeViewer: string;
  before(async () => {
    t = await startHost({ plugins: [incidents, compliance] });
    op = (await t.userToken('operator')).token;
    viewer = (await t.userToken('viewer')).token;
    acmeViewer = (await t.userToken('viewer', 'acme')).token;
  });
  after(() => t.stop());

  const verify = async (body: unknown = {}) => {
    const r = await t.request('POST', '/compliance/verify', { token: op, body });
    expect(r.status).to.equal(200);
    return Object.fromEntries(r.body.results.map((x: { control_id: string }) => [x.control_id, x])) as Record<string, any>;
  };

  describe('GET /compliance/controls', () => {
    it('lists the SOC 2 controls with their parameters, not yet verified', async () => {
      const r = await t.request('GET', '/compliance/controls', { token: viewer });
      expect(r.status).to.equal(200);
      expect(r.body.controls.map((c: { id: string }) => c.id)).to.deep.equal(['access-review', 'audit-log-completeness', 'backups', 'incident-response-time', 'password-policy', 'secrets-at-rest']);
      expect(r.body.controls.every((c: { latest: unknown; framework: string }) => c.latest === null && c.framework === 'SOC2')).to.equal(true);
      const cc6 = await t.request('GET', '/compliance/controls?criterion=CC6.1', { token: viewer });
      expect(cc6.body.controls.map((c: { id: string }) => c.id)).to.deep.equal(['password-policy', 'secrets-at-rest']);
    });

    it('answers 401 and 422', async () => {
      expect((await t.request('GET', '/compliance/controls', { token: null })).status).to.equal(401);
      expect((await t.request('GET', '/compliance/controls?criterion=drop%20table', { token: viewer })).status).to.equal(422);
    });
  });

  describe('POST /compliance/verify', () => {
    it('tests each control against the live system and stores the evidence', async () => {
      const i = await t.request('POST', '/incidents/detect', { token: op, body: { title: 'disk filling', severity: 'high' } });
      expect(i.status).to.equal(201);
      const r = await verify();
      expect(r['secrets-at-rest']).to.deep.include({ status: 'pass' });
      expect(r['secrets-at-rest'].evidence.passwords_not_hashed).to.equal(0);
      expect(r['password-policy']).to.deep.include({ status: 'pass' });
      expect(r['password-policy'].evidence.mfa).to.equal('not offered by the platform');
      expect(r['audit-log-completeness']).to.deep.include({ status: 'pass', evidence: { manual_incidents: 1, with_action_record: 1, missing: [] } });
      expect(r.backups.status).to.equal('fail');
      expect(r.backups.evidence).to.include({ backups: 0, newest: null });
      expect(r['access-review'].status).to.equal('pass');
      // the high incident is open but still within its hour
      expect(r['incident-response-time']).to.deep.include({ status: 'pass' });
      expect(r['incident-response-time'].evidence.incidents).to.equal(1);
    });

    it('fails the access review for a privileged user unused past the limit, and passes backups once one exists', async () => {
      const stale = await t.userToken('operator');
      await t.host.services.db('users').where({ id: stale.userId }).update({ created_at: new Date(Date.now() - 120 * 86_400_000).toISOString() });
      fs.mkdirSync(path.join(t.dataDir, 'backups'), { recursive: true });
      fs.writeFileSync(path.join(t.dataDir, 'backups', 'platform-2026.sqlite'), 'backup');
      const r = await verify({ control_ids: ['access-review', 'backups'] });
      expect(Object.keys(r)).to.deep.equal(['access-review', 'backups']);
      expect(r['access-review'].status).to.equal('fail');
      expect(r['access-review'].evidence.unused).to.deep.equal([{ user_id: stale.userId, email: stale.email, role: 'operator' }]);
      expect(r.backups.status).to.equal('pass');
    });

    it('answers 401, 403 below operator and 422 for an unknown control', async () => {
      expect((await t.request('POST', '/compliance/verify', { token: null, body: {} })).status).to.equal(401);
      expect((await t.request('POST', '/compliance/verify', { token: viewer, body: {} })).status).to.equal(403);
      expect((await t.request('POST', '/compliance/verify', { token: op, body: { control_ids: ['nope'] } })).status).to.equal(422);
      expect((await t.request('POST', '/compliance/verify', { token: op, body: { control_ids: [] } })).status).to.equal(422);
    });
  });

  describe('GET /compliance/report', () => {
    it('shows each control with its latest evidence and history, per tenant', async () => {
      const r = await t.request('GET', '/compliance/report', { token: viewer });
      expect(r.status).to.equal(200);
      expect(r.body.summary).to.deep.equal({ pass: 5, fail: 1, not_applicable: 0, not_verified: 0 });
      const backups = r.body.controls.find((c: { id: string }) => c.id === 'backups');
      expect(backups.latest.status).to.equal('pass');
      expect(backups.history.map((h: { status: string }) => h.status)).to.deep.equal(['pass', 'fail']);
      expect(r.body.controls.find((c: { id: string }) => c.id === 'secrets-at-rest').history).to.have.length(1);
      const other = await t.request('GET', '/compliance/report', { token: acmeViewer });
      expect(other.body.summary).to.deep.equal({ pass: 0, fail: 0, not_applicable: 0, not_verified: 6 });
      expect(other.body.verified_at).to.equal(null);
    });

    it('answers 401 and 422', async () => {
      expect((await t.request('GET', '/compliance/report', { token: null })).status).to.equal(401);
      expect((await t.request('GET', '/compliance/report?history=0', { token: viewer })).status).to.equal(422);
    });
  });
});
