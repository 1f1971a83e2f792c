import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import auth from '../../../plugins/auth';
import secsuite from '../../../plugins/secsuite';
import security from '../../../plugins/security';
import { startHost, type TestHost } from '../../helpers/host';

const P = '/secsuite/endpointsec';
const PASSWORD = 'a-long-test-password-1';
const BAD_HASH = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

const bundle = {
  type: 'bundle',
  id: 'bundle--5d0092c5-5f74-4287-9642-33f4c354e56d',
  objects: [
    { type: 'indicator', spec_version: '2.1', id: 'indicator--8e2e2d2b-17d4-4cbf-938f-98ee46b3cd3f', name: 'Dropper hash', pattern_type: 'stix', valid_from: '2026-01-01T00:00:00Z', pattern: `[file:hashes.'SHA-256' = '${BAD_HASH.toUpperCase()}']`, indicator_types: ['malicious-activity'] },
    { type: 'indicator', spec_version: '2.1', id: 'indicator--1f1e2d2b-17d4-4cbf-938f-98ee46b3cd3f', name: 'C2', pattern_type: 'stix', valid_from: '2026-01-01T00:00:00Z', pattern: "[ipv4-addr:value = '203.0.113.0/24'] OR [domain-name:value = 'evil.example']" },
    { type: 'indicator', spec_version: '2.1', id: 'indicator--2f1e2d2b-17d4-4cbf-938f-98ee46b3cd3f', pattern_type: 'sigma', pattern: 'title: x', valid_from: '2026-01-01T00:00:00Z' },
    { type: 'malware', spec_version: '2.1', id: 'malware--31b940d4-6f7f-459a-80ea-9c1f17b5891b', name: 'Poison Ivy', is_family: false },
  ],
};

describe('secsuite: endpoint protection (/secsuite/endpointsec)', () => {
  let t: TestHost;
  let op: { token: string; userId: string; email: string };
  let member: string;
  let viewer: string;
  let other: string; // member of another tenant
  let key: string;
  let keyId: string;
  let detectionId: string;
  before(async () => {
    t = await startHost({ plugins: [auth, security, secsuite] });
    op = await t.userToken('operator', 'ep-a');
    member = (await t.userToken('member', 'ep-a')).token;
    viewer = (await t.userToken('viewer', 'ep-a')).token;
    other = (await t.userToken('member', 'ep-b')).token;
  });
  after(() => t.stop());

  it('POST /keys: an operator creates an integration key shown once (403 member, 422 bad body)', async () => {
    const r = await t.request('POST', `${P}/keys`, { token: op.token, body: { name: 'forwarder' } });
    expect(r.status).to.equal(201);
    expect(r.body.key).to.match(/^esk_/);
    key = r.body.key;
    keyId = r.body.id;
    const row = await t.host.services.db('endpointsec_keys').where({ id: keyId }).first();
    expect(row.key_hash).to.not.equal(key);
    expect((await t.request('POST', `${P}/keys`, { token: member, body: { name: 'x' } })).status).to.equal(403);
    expect((await t.request('POST', `${P}/keys`, { token: op.token, body: {} })).status).to.equal(422);
  });

  describe('pushes', () => {
    it('POST /events with a key, a signed body, or a member token; 401 without; 422 bad items', async () => {
      const items = [{ device_id: 'pc-1', hostname: 'pc-1.corp', address: '10.1.0.5', type: 'process_start', severity: 'info', source: 'agent-a' }];
      const byKey = await t.request('POST', `${P}/events`, { token: null, headers: { 'x-integration-key': key }, body: { items } });
      expect(byKey.status).to.equal(201);
      expect(byKey.body).to.include({ accepted: 1, intel_matches: 0 });
      const raw = JSON.stringify({ items: [{ ...items[0], source: 'forwarder-b' }] });
      const sig = crypto.createHmac('sha256', crypto.createHash('sha256').update(key).digest('hex')).update(raw).digest('hex');
      const signed = await t.request('POST', `${P}/events`, { token: null, raw, headers: { 'x-integration-key-id': keyId, 'x-signature': `sha256=${sig}` } });
      expect(signed.status).to.equal(201);
      const forged = await t.request('POST', `${P}/events`, { token: null, raw, headers: { 'x-integration-key-id': keyId, 'x-signature': `sha256=${'0'.repeat(64)}` } });
      expect(forged.status).to.equal(401);
      expect((await t.request('POST', `${P}/events`, { token: member, body: { items } })).status).to.equal(201);
      expect((await t.request('POST', `${P}/events`, { token: null, body: { items } })).status).to.equal(401);
      expect((await t.request('POST', `${P}/events`, { token: null, headers: { 'x-integration-key': 'esk_wrong' }, body: { items } })).status).to.equal(401);
      expect((await t.request('POST', `${P}/events`, { token: viewer, body: { items } })).status).to.equal(403);
      expect((await t.request('POST', `${P}/events`, { token: member, body: { items: [{ type: 'x' }] } })).status).to.equal(422);
      expect((await t.request('POST', `${P}/events`, { token: member, body: { items: [] } })).status).to.equal(422);
    });

    it('POST /intelligence/indicators loads a STIX 2.1 bundle (422 for a non-bundle)', async () => {
      const r = await t.request('POST', `${P}/intelligence/indicators`, { token: member, body: { stix_bundle: bundle } });
      expect(r.status).to.equal(201);
      expect(r.body.loaded).to.equal(3);
      expect(r.body.skipped.map((s: { id: string }) => s.id)).to.have.members([bundle.objects[2].id, bundle.objects[3].id]);
      expect((await t.request('POST', `${P}/intelligence/indicators`, { token: member, body: { stix_bundle: { type: 'report' } } })).status).to.equal(422);
      expect((await t.request('POST', `${P}/intelligence/indicators`, { token: viewer, body: { indicators: [] } })).status).to.equal(403);
    });

    it('POST /detections matches intelligence at once and feeds the security service', async () => {
      const r = await t.request('POST', `${P}/detections`, { token: member, body: { items: [{ device_id: 'pc-1', type: 'malware', severity: 'high', indicators: { hashes: [BAD_HASH], ips: ['203.0.113.9'], domains: ['cdn.evil.example'] } }] } });
      expect(r.status).to.equal(201);
      expect(r.body.intel_matches).to.equal(3);
      detectionId = r.body.ids[0];
      const ev = await t.request('GET', '/security/events?category=endpoint.intel_match', { token: viewer });
      expect(ev.body.events).to.have.length(1);
      expect(ev.body.events[0]).to.include({ actor: 'pc-1', tenant_id: 'ep-a', severity: 'high' });
      const f = await t.request('GET', '/security/findings?rule_id=endpoint-intel-match', { token: viewer });
      expect(f.body.findings[0]).to.include({ subject: 'pc-1', state: 'open' });
      expect((await t.request('POST', `${P}/detections`, { token: member, body: { items: [{ device_id: 'pc-1', type: 'x', severity: 'fatal' }] } })).status).to.equal(422);
    });

    it('POST /identity-events stores identity events (422 without identity)', async () => {
      const r = await t.request('POST', `${P}/identity-events`, { token: null, headers: { 'x-integration-key': key }, body: { items: [{ identity: 'someone@ep-a.test', type: 'mfa_denied', severity: 'medium' }] } });
      expect(r.status).to.equal(201);
      expect((await t.request('GET', '/security/events?category=endpoint.identity', { token: viewer })).body.events[0]).to.include({ actor: 'someone@ep-a.test' });
      expect((await t.request('POST', `${P}/identity-events`, { token: member, body: { items: [{ type: 'login' }] } })).status).to.equal(422);
    });
  });

  describe('matching and responses', () => {
    it('POST /detections/{id}/match-intelligence explains each match; 404 for another tenant', async () => {
      const r = await t.request('POST', `${P}/detections/${detectionId}/match-intelligence`, { token: member });
      expect(r.status).to.equal(200);
      expect(r.body.checked).to.equal(3);
      expect(r.body.matches.map((m: { matched_by: string }) => m.matched_by).sort()).to.deep.equal(['203.0.113.9 inside 203.0.113.0/24', 'equal hash', 'parent domain']);
      expect((await t.request('POST', `${P}/detections/${detectionId}/match-intelligence`, { token: other })).status).to.equal(404);
      expect((await t.request('POST', `${P}/detections/${detectionId}/match-intelligence`, { token: null })).status).to.equal(401);
    });

    it('POST /quarantine contains a device: its data is refused; vendor not configured is said; 409 twice; 404 unknown', async () => {
      const r = await t.request('POST', `${P}/quarantine`, { token: op.token, body: { device_id: 'pc-1', reason: 'malware' } });
      expect(r.status).to.equal(200);
      expect(r.body.device.containment).to.equal('contained');
      expect(r.body.vendor).to.include({ status: 'not_configured', config_key: 'secsuite.endpointsec.vendorUrl' });
      const push = await t.request('POST', `${P}/events`, { token: null, headers: { 'x-integration-key': key }, body: { items: [{ device_id: 'pc-1', type: 'x' }] } });
      expect(push.body.accepted).to.equal(0);
      expect(push.body.refused[0].code).to.equal('DEVICE_QUARANTINED');
      expect((await t.request('POST', `${P}/quarantine`, { token: op.token, body: { device_id: 'pc-1' } })).status).to.equal(409);
      expect((await t.request('POST', `${P}/quarantine`, { token: op.token, body: { device_id: 'pc-404' } })).status).to.equal(404);
      const strict = await t.request('POST', `${P}/unquarantine`, { token: op.token, body: { device_id: 'pc-1', require_vendor: true } });
      expect(strict.status).to.equal(503);
      expect(strict.body.code).to.equal('NOT_CONFIGURED');
      expect((await t.request('POST', `${P}/quarantine`, { token: member, body: { device_id: 'pc-1' } })).status).to.equal(403);
    });

    it('POST /unquarantine releases it (409 when not contained); 422 bad id', async () => {
      const r = await t.request('POST', `${P}/unquarantine`, { token: op.token, body: { device_id: 'pc-1' } });
      expect(r.status).to.equal(200);
      expect(r.body.device.containment).to.equal('normal');
      expect((await t.request('POST', `${P}/unquarantine`, { token: op.token, body: { device_id: 'pc-1' } })).status).to.equal(409);
      expect((await t.request('POST', `${P}/unquarantine`, { token: op.token, body: { device_id: 'has space' } })).status).to.equal(422);
    });

    it('POST /disable-user disables a platform user for real; other identities need the vendor (503)', async () => {
      const u = await t.userToken('viewer', 'ep-a');
      const r = await t.request('POST', `${P}/disable-user`, { token: op.token, body: { identity: u.email, reason: 'stolen laptop' } });
      expect(r.status).to.equal(200);
      expect(r.body.platform_user).to.equal(true);
      expect((await t.request('GET', `${P}/events`, { token: u.token })).status).to.equal(401);
      const login = await t.request('POST', '/auth/login', { token: null, body: { email: u.email, password: PASSWORD } });
      expect(login.body.code).to.equal('ACCOUNT_DISABLED');
      const ext = await t.request('POST', `${P}/disable-user`, { token: op.token, body: { identity: 'contractor@elsewhere.example' } });
      expect(ext.status).to.equal(503);
      expect(ext.body.code).to.equal('NOT_CONFIGURED');
      expect((await t.request('POST', `${P}/disable-user`, { token: op.token, body: { identity: op.email } })).status).to.equal(409);
      expect((await t.request('POST', `${P}/disable-user`, { token: op.token, body: {} })).status).to.equal(422);
      expect((await t.request('POST', `${P}/disable-user`, { token: member, body: { identity: u.email } })).status).to.equal(403);
    });

    it('the vendor adapter is a signed webhook when configured', async () => {
      const got: Array<{ body: string; sig: string }> = [];
      const server = http.createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          if (req.method === 'POST') got.push({ body, sig: String(req.headers['x-signature']) });
          res.end('{}');
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const v = await startHost({ plugins: [auth, security, secsuite], config: { secsuite: { endpointsec: { vendorUrl: url, vendorSecret: 'vendor-webhook-secret-1' } } } });
      try {
        const o = await v.userToken('operator', 'ep-v');
        const r = await v.request('POST', `${P}/disable-user`, { token: o.token, body: { identity: 'contractor@elsewhere.example' } });
        expect(r.status).to.equal(200);
        expect(r.body.vendor.status).to.equal('applied');
        expect(got).to.have.length(1);
        expect(JSON.parse(got[0].body)).to.include({ action: 'disable_user', identity: 'contractor@elsewhere.example' });
        expect(got[0].sig).to.equal(`sha256=${crypto.createHmac('sha256', 'vendor-webhook-secret-1').update(got[0].body).digest('hex')}`);
        const h = await v.request('GET', `${P}/health`, { token: o.token });
        expect(h.body.adapter).to.include({ configured: true, reachable: true });
      } finally {
        await v.stop();
        server.close();
      }
    });
  });

  describe('reads', () => {
    it('GET /events and /detections list the tenant\'s records with filters (422, 401, tenant isolation)', async () => {
      const e = await t.request('GET', `${P}/events?device_id=pc-1`, { token: viewer });
      expect(e.status).to.equal(200);
      expect(e.body.events.length).to.equal(3);
      expect((await t.request('GET', `${P}/events`, { token: other })).body.events).to.deep.equal([]);
      const d = await t.request('GET', `${P}/detections?severity=high`, { token: viewer });
      expect(d.body.detections.map((x: { id: string }) => x.id)).to.deep.equal([detectionId]);
      expect(d.body.detections[0].intel_matches).to.equal(3);
      expect((await t.request('GET', `${P}/detections?severity=bad`, { token: viewer })).status).to.equal(422);
      expect((await t.request('GET', `${P}/events?limit=0`, { token: viewer })).status).to.equal(422);
      expect((await t.request('GET', `${P}/detections`, { token: null })).status).to.equal(401);
    });

    it('GET /response-history lists quarantine, release and disable', async () => {
      const r = await t.request('GET', `${P}/response-history`, { token: viewer });
      expect(r.body.actions.map((a: { action: string }) => a.action)).to.deep.equal(['disable_user', 'unquarantine_device', 'quarantine_device']);
      expect((await t.request('GET', `${P}/response-history`, { token: other })).body.actions).to.deep.equal([]);
      expect((await t.request('GET', `${P}/response-history?limit=x`, { token: viewer })).status).to.equal(422);
      expect((await t.request('GET', `${P}/response-history`, { token: null })).status).to.equal(401);
    });

    it('GET /intelligence/summary counts indicators and matched detections', async () => {
      const r = await t.request('GET', `${P}/intelligence/summary`, { token: viewer });
      expect(r.body.indicators).to.deep.include({ total: 3, active: 3, by_type: { hash: 1, ip: 1, domain: 1, url: 0 } });
      expect(r.body.detections).to.deep.equal({ total: 1, matched: 1, matches: 3 });
      expect((await t.request('GET', `${P}/intelligence/summary`, { token: other })).body.indicators.total).to.equal(0);
      expect((await t.request('GET', `${P}/intelligence/summary`, { token: null })).status).to.equal(401);
    });

    it('GET /health shows the last data per source and the unconfigured adapter', async () => {
      const r = await t.request('GET', `${P}/health`, { token: viewer });
      expect(r.body.sources.map((s: { source: string }) => s.source)).to.include.members(['agent-a', 'forwarder-b']);
      expect(r.body.devices).to.deep.equal({ total: 1, contained: 0 });
      expect(r.body.adapter).to.include({ configured: false, reachable: null });
      expect((await t.request('GET', `${P}/health`, { token: null })).status).to.equal(401);
    });

    it('GET /metrics counts records, responses and time to contain (422 bad window)', async () => {
      const r = await t.request('GET', `${P}/metrics`, { token: viewer });
      expect(r.body.records.find((x: { kind: string; severity: string }) => x.kind === 'detection' && x.severity === 'high').count).to.equal(1);
      expect(r.body.responses).to.deep.include({ action: 'quarantine_device', count: 1 });
      expect(r.body.time_to_contain_seconds.count).to.equal(1);
      expect((await t.request('GET', `${P}/metrics?window_days=0`, { token: viewer })).status).to.equal(422);
      expect((await t.request('GET', `${P}/metrics`, { token: null })).status).to.equal(401);
    });

    it('POST /predict-threats ranks devices by decayed, severity-weighted detections', async () => {
      await t.request('POST', `${P}/detections`, { token: member, body: { items: [{ device_id: 'pc-2', type: 'pup', severity: 'low' }] } });
      const r = await t.request('POST', `${P}/predict-threats`, { token: member, body: {} });
      expect(r.status).to.equal(200);
      expect(r.body.devices.map((d: { device_id: string }) => d.device_id)).to.deep.equal(['pc-1', 'pc-2']);
      expect(r.body.devices[0].risk).to.be.closeTo(8 + 3 * 8, 0.01);
      expect(r.body.method).to.match(/half_life/);
      expect((await t.request('POST', `${P}/predict-threats`, { token: other, body: {} })).body.devices).to.deep.equal([]);
      expect((await t.request('POST', `${P}/predict-threats`, { token: member, body: { half_life_days: 0 } })).status).to.equal(422);
      expect((await t.request('POST', `${P}/predict-threats`, { token: viewer, body: {} })).status).to.equal(403);
    });
  });
});
