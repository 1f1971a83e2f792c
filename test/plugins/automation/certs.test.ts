import crypto from 'node:crypto';
import https from 'node:https';
import { expect } from 'chai';
import { eventually } from '../../helpers/eventually';
import { startHost, type TestHost } from '../../helpers/host';
import { preparePebble, type Pebble } from '../../helpers/pebble';

/** A GET over a real TLS connection that trusts only `ca`. */
function tlsGet(port: number, path: string, ca: string, servername: string): Promise<{ status: number; body: string; serial: string; protocol: string | null }> {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: '127.0.0.1', port, path, ca, servername, agent: false }, (res) => {
      let body = '';
      const sock = res.socket as import('node:tls').TLSSocket;
      const serial = sock.getPeerX509Certificate()?.serialNumber ?? '';
      const protocol = sock.getProtocol();
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, serial, protocol }));
    });
    req.on('error', reject);
  });
}

describe('automation: certificates and HTTPS', function () {
  this.timeout(60_000);
  let h: TestHost;
  let pebble: Pebble;
  let viewer: string;
  let operator: string;
  let other: string;

  before(async () => {
    pebble = await preparePebble();
    h = await startHost({ config: { automation: { https: { port: 0 }, acme: { directoryUrl: pebble.directoryUrl, caFile: pebble.caFile, email: 'ops@example.com' } } } });
    await pebble.start(h.port);
    viewer = (await h.userToken('viewer')).token;
    operator = (await h.userToken('operator')).token;
    other = (await h.userToken('operator', 'other-tenant')).token;
  });
  after(async () => {
    await h?.stop();
    await pebble?.stop();
  });

  let certId: string;
  let caPem: string;

  it('issues a certificate from the local CA, without its key', async () => {
    const r = await h.request('POST', '/automation/certificates/provision', { body: { names: ['localhost', '127.0.0.1'] }, token: operator });
    expect(r.status).to.equal(201);
    expect(r.body.state).to.equal('active');
    expect(r.body.issuer_kind).to.equal('local');
    expect(r.body.subject_alt_names).to.deep.equal(['DNS:localhost', 'IP Address:127.0.0.1']);
    expect(r.body.issuer).to.contain('platform-control local CA');
    expect(r.body.serial).to.match(/^[0-9A-F]+$/);
    expect(r.body.days_left).to.be.within(89, 90.01);
    expect(r.text).to.not.contain('PRIVATE KEY');
    const x = new crypto.X509Certificate(r.body.certificate_pem);
    expect(x.fingerprint256).to.equal(r.body.fingerprint_sha256);
    caPem = r.body.chain_pem;
    expect(x.verify(new crypto.X509Certificate(caPem).publicKey)).to.equal(true);
    certId = r.body.id;
    // The CA key is stored sealed, never in clear.
    const sealed = await h.host.services.db('automation_secrets').where({ name: 'local_ca' }).first();
    expect(sealed.sealed).to.not.contain('PRIVATE');
  });

  it('answers a retry with the same Idempotency-Key with the first certificate', async () => {
    const send = (key: string) => h.request('POST', '/automation/certificates/provision', { body: { names: ['retry.example'] }, token: operator, headers: { 'idempotency-key': key } });
    const first = await send('cert-key-1');
    const again = await send('cert-key-1');
    expect(first.status).to.equal(201);
    expect(again.body.id).to.equal(first.body.id);
    expect(again.body.serial).to.equal(first.body.serial);
    expect((await send('cert-key-2')).body.id).to.not.equal(first.body.id);
    expect((await send('x'.repeat(201))).status).to.equal(422);
  });

  it('refuses bad names, missing tokens and viewers', async () => {
    expect((await h.request('POST', '/automation/certificates/provision', { body: { names: ['Not A Name!'] }, token: operator })).status).to.equal(422);
    expect((await h.request('POST', '/automation/certificates/provision', { body: { names: [] }, token: operator })).status).to.equal(422);
    expect((await h.request('POST', '/automation/certificates/provision', { body: { names: ['a.example'] }, token: null })).status).to.equal(401);
    expect((await h.request('POST', '/automation/certificates/provision', { body: { names: ['a.example'] }, token: viewer })).status).to.equal(403);
  });

  it('lists, shows and finds expiring certificates of the tenant only', async () => {
    const list = await h.request('GET', '/automation/certificates?limit=10', { token: viewer });
    expect(list.status).to.equal(200);
    expect(list.body.certificates.map((c: { id: string }) => c.id)).to.include(certId);
    const one = await h.request('GET', `/automation/certificates/${certId}`, { token: viewer });
    expect(one.body.names).to.deep.equal(['localhost', '127.0.0.1']);
    expect((await h.request('GET', `/automation/certificates/${certId}`, { token: other })).status).to.equal(404);
    expect((await h.request('GET', '/automation/certificates', { token: other })).body.certificates).to.deep.equal([]);
    expect((await h.request('GET', '/automation/certificates/not-a-uuid', { token: viewer })).status).to.equal(422);
    expect((await h.request('GET', '/automation/certificates', { token: null })).status).to.equal(401);
    const soon = await h.request('GET', '/automation/certificates/expiring?days=30', { token: viewer });
    expect(soon.status).to.equal(200);
    expect(soon.body.certificates).to.deep.equal([]);
    const later = await h.request('GET', '/automation/certificates/expiring?days=100', { token: viewer });
    expect(later.body.certificates.map((c: { id: string }) => c.id)).to.include(certId);
    expect((await h.request('GET', '/automation/certificates/expiring?days=-1', { token: viewer })).status).to.equal(422);
  });

  it('renews with a new serial and key; other tenants and viewers cannot', async () => {
    const before = (await h.request('GET', `/automation/certificates/${certId}`, { token: viewer })).body;
    const r = await h.request('POST', `/automation/certificates/${certId}/renew`, { token: operator });
    expect(r.status).to.equal(200);
    expect(r.body.serial).to.not.equal(before.serial);
    expect(r.body.renewals).to.equal(1);
    expect((await h.request('POST', `/automation/certificates/${certId}/renew`, { token: other })).status).to.equal(404);
    expect((await h.request('POST', `/automation/certificates/${certId}/renew`, { token: viewer })).status).to.equal(403);
    expect((await h.request('POST', `/automation/certificates/${crypto.randomUUID()}/renew`, { token: operator })).status).to.equal(404);
  });

  it('gets a certificate from pebble over ACME, HTTP-01 answered by the service', async () => {
    const r = await h.request('POST', '/automation/certificates/provision', { body: { names: ['localhost'], issuer: 'acme' }, token: operator });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(r.body.issuer_kind).to.equal('acme');
    expect(r.body.issuer).to.match(/Pebble Intermediate CA/);
    expect(r.body.subject_alt_names).to.deep.equal(['DNS:localhost']);
    // The challenge answers were removed after the order.
    expect(await h.host.services.db('automation_acme_challenges').count('* as n').first()).to.deep.equal({ n: 0 });
  });

  it('serves HTTPS with a provisioned certificate, verified by a real TLS client', async () => {
    expect((await h.request('POST', '/automation/https/enable', { body: { cert_id: certId }, token: viewer })).status).to.equal(403);
    expect((await h.request('POST', '/automation/https/enable', { body: { cert_id: 'x' }, token: operator })).status).to.equal(422);
    expect((await h.request('POST', '/automation/https/enable', { body: { cert_id: certId }, token: other })).status).to.equal(404);
    const r = await h.request('POST', '/automation/https/enable', { body: { cert_id: certId }, token: operator });
    expect(r.status).to.equal(200);
    expect(r.body.enabled).to.equal(true);
    const port = r.body.listener.port as number;
    expect(port).to.be.greaterThan(0);
    const got = await tlsGet(port, '/automation/https/status', caPem, 'localhost');
    expect(got.status).to.equal(401); // the same API, over TLS: no token, no answer
    expect(got.protocol).to.equal('TLSv1.3');
    const status = await h.request('GET', '/automation/https/status', { token: viewer });
    expect(status.body.listener.handshakes).to.be.greaterThan(0);
    expect(status.body.certificate.id).to.equal(certId);

    const v = await h.request('POST', '/automation/https/verify', { body: {}, token: operator });
    expect(v.status).to.equal(200);
    expect(v.body.authorized, JSON.stringify(v.body)).to.equal(true);
    expect(v.body.names, JSON.stringify(v.body)).to.include('DNS:localhost');
    expect(v.body.chain[0].serial).to.equal(got.serial);
    expect(v.body.days_left).to.be.greaterThan(89);
    // A name the certificate does not carry is not authorized.
    const wrong = await h.request('POST', '/automation/https/verify', { body: { host: '127.0.0.1', port, servername: 'example.org' }, token: operator });
    expect(wrong.body.ok).to.equal(true);
    expect(wrong.body.authorized).to.equal(false);
    expect((await h.request('POST', '/automation/https/verify', { body: { host: '127.0.0.1', port: 0 }, token: operator })).status).to.equal(422);
    expect((await h.request('POST', '/automation/https/verify', { body: {}, token: viewer })).status).to.equal(403);
    expect((await h.request('GET', '/automation/https/status', { token: null })).status).to.equal(401);
  });

  it('hot-reloads the listener when its certificate is renewed', async () => {
    const r = await h.request('POST', `/automation/certificates/${certId}/renew`, { token: operator });
    const port = (await h.request('GET', '/automation/https/status', { token: viewer })).body.listener.port;
    const got = await tlsGet(port, '/automation/https/status', caPem, 'localhost');
    expect(got.serial).to.equal(r.body.serial);
    expect((await h.request('GET', '/automation/https/status', { token: viewer })).body.listener.reloads).to.equal(1);
  });

  it('watches HTTPS hosts: update, metrics, health', async () => {
    const port = (await h.request('GET', '/automation/https/status', { token: viewer })).body.listener.port;
    expect((await h.request('POST', '/automation/monitoring/https/update', { body: { targets: [{ host: '127.0.0.1', port: 70000 }] }, token: operator })).status).to.equal(422);
    expect((await h.request('POST', '/automation/monitoring/https/update', { body: { targets: [] }, token: viewer })).status).to.equal(403);
    const u = await h.request('POST', '/automation/monitoring/https/update', { body: { targets: [{ host: '127.0.0.1', port, servername: 'localhost' }, { host: '127.0.0.1', port: h.port }] }, token: operator });
    expect(u.status).to.equal(200);
    expect(u.body.targets).to.have.length(2);
    const now = await h.request('POST', '/automation/monitoring/check/immediate', { token: operator });
    expect(now.status).to.equal(200);
    expect(now.body.runs.https_check.summary.targets).to.equal(3);
    // The plain HTTP port does not speak TLS: that target fails.
    expect(now.body.runs.https_check.summary.failing).to.deep.equal([`127.0.0.1:${h.port}`]);
    const health = await h.request('GET', '/automation/monitoring/https/health', { token: viewer });
    expect(health.status).to.equal(200);
    expect(health.body.healthy).to.equal(false);
    const good = health.body.targets.find((t: { target: string }) => t.target === `127.0.0.1:${port}/localhost`);
    expect(good.ok && good.authorized).to.equal(true);
    const metrics = await h.request('GET', '/automation/monitoring/https/metrics', { token: viewer });
    expect(metrics.status).to.equal(200);
    const m = metrics.body.checks.find((c: { target: string }) => c.target === `127.0.0.1:${h.port}`);
    expect(m).to.include({ checks: 1, succeeded: 0, failed: 1 });
    expect((await h.request('GET', '/automation/monitoring/https/metrics', { token: null })).status).to.equal(401);
  });

  it('renews in the background what is inside its renew window', async () => {
    const fresh = await h.request('POST', '/automation/certificates/provision', { body: { names: ['soon.example'] }, token: operator });
    // The certificate ages: its end is now 10 days away (renewBeforeDays is 30).
    await h.host.services.db('automation_certificates').where({ id: fresh.body.id }).update({ not_after: new Date(Date.now() + 10 * 86400_000).toISOString() });
    await h.request('POST', '/automation/monitoring/check/immediate', { token: operator });
    const after = await eventually(async () => {
      const r = await h.request('GET', `/automation/certificates/${fresh.body.id}`, { token: viewer });
      return r.body.renewals === 1 ? r.body : null;
    });
    expect(after.days_left).to.be.greaterThan(89);
    // The one served by HTTPS was not due and was left alone.
    expect((await h.request('GET', `/automation/certificates/${certId}`, { token: viewer })).body.renewals).to.equal(2);
  });

  it('comes back with HTTPS on after a restart', async () => {
    const cfg = { automation: { https: { port: 0 }, acme: { directoryUrl: pebble.directoryUrl, caFile: pebble.caFile } } };
    await h.stop();
    h = await startHost({ dataDir: h.dataDir, config: cfg });
    const status = await eventually(async () => {
      const r = await h.request('GET', '/automation/https/status');
      return r.body.enabled ? r.body : null;
    });
    expect(status.certificate.id).to.equal(certId);
    const got = await tlsGet(status.listener.port, '/automation/https/status', caPem, 'localhost');
    expect(got.status).to.equal(401);
  });
});
