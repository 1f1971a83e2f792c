import { expect } from 'chai';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import alerts from '../../plugins/alerts';
import incidents from '../../plugins/incidents';
import interop from '../../plugins/interop';
import { CloudEvent } from 'cloudevents';
import dns from 'node:dns';
import { forbiddenAddress, safeLookup } from '../../plugins/alerts/urls';
import { eventually } from '../helpers/eventually';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver in the test process; `answer` picks the status of each request. */
async function receiver(answer: (n: number, path: string) => number | 'hang' = () => 200) {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      got.push({ path: req.url ?? '', headers: req.headers, body });
      const status = answer(got.filter((g) => g.path === req.url).length, req.url ?? '');
      if (status === 'hang') return;
      res.writeHead(status).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { got, url, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

function verify(secret: string, r: Received): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(r.headers['x-alert-signature']));
  if (!m) return false;
  const mac = crypto.createHmac('sha256', secret).update(`${m[1]}.${r.body}`).digest('hex');
  return crypto.timingSafeEqual(Buffer.from(mac), Buffer.from(m[2])) && Math.abs(Number(m[1]) - Date.now() / 1000) < 60;
}

eachDatabase('alerts plugin', (db) => {
  let t: TestHost;
  let rx: Awaited<ReturnType<typeof receiver>>;
  let op: string;
  let viewer: string;
  let acmeOp: string;
  before(async () => {
    t = await startHost({ db, plugins: [alerts], config: { alerts: { retryBaseMs: 20, retryMaxMs: 100, maxAttempts: 3, timeoutMs: 500 } } });
    op = (await t.userToken('operator')).token;
    viewer = (await t.userToken('viewer')).token;
    acmeOp = (await t.userToken('operator', 'acme')).token;
    // /flaky fails its first request; /hang never answers; the rest succeed.
    rx = await receiver((n, path) => (path === '/flaky' && n === 1 ? 503 : path === '/hang' ? 'hang' : 200));
  });
  after(async () => {
    await t.stop();
    await rx.close();
  });

  const subscribe = (body: Record<string, unknown>, token = op) => t.request('POST', '/ops/alerts/subscriptions', { token, body: { event_types: ['incident'], ...body } });
  const deliveries = async (id: string, token = op) => (await t.request('GET', `/ops/alerts/subscriptions/${id}/deliveries`, { token })).body.deliveries;
  const remove = (id: string, token = op) => t.request('DELETE', `/ops/alerts/subscriptions/${id}`, { token });

  it('creates a subscription, shows the secret once, lists it without the secret', async () => {
    const r = await subscribe({ url: `${rx.url}/listed`, event_types: ['incident', 'breaker_state'], description: 'pager' });
    expect(r.status).to.equal(201);
    expect(r.body.secret).to.match(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(r.body).to.include({ url: `${rx.url}/listed`, tenant_id: 'platform', description: 'pager' });
    const list = await t.request('GET', '/ops/alerts/subscriptions', { token: op });
    expect(list.status).to.equal(200);
    const mine = list.body.subscriptions.find((s: { id: string }) => s.id === r.body.id);
    expect(mine.event_types).to.deep.equal(['incident', 'breaker_state']);
    expect(mine).not.to.have.property('secret');
    expect((await t.request('GET', '/ops/alerts/subscriptions', { token: acmeOp })).body.subscriptions).to.deep.equal([]);
    expect((await remove(r.body.id)).status).to.equal(204);
  });

  it('needs operator: 401 without a token, 403 for a viewer', async () => {
    expect((await t.request('GET', '/ops/alerts/subscriptions', { token: null })).status).to.equal(401);
    expect((await t.request('GET', '/ops/alerts/subscriptions', { token: viewer })).status).to.equal(403);
    expect((await subscribe({ url: rx.url }, viewer)).status).to.equal(403);
    expect((await remove(crypto.randomUUID(), viewer)).status).to.equal(403);
    expect((await t.request('GET', `/ops/alerts/subscriptions/${crypto.randomUUID()}/deliveries`, { token: viewer })).status).to.equal(403);
  });

  it('refuses link-local, metadata and malformed URLs and unknown event types (422), storing nothing', async () => {
    const bad = [
      'http://169.254.169.254/latest/meta-data/',
      'http://169.254.10.1/hook',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://METADATA.google.internal./x',
      'http://[fe80::1]/hook',
      'http://[fd00:ec2::254]/hook',
      'http://[::ffff:169.254.169.254]/hook',
      'ftp://127.0.0.1/hook',
      'http://user:pw@127.0.0.1/hook',
      'not a url',
      'http://does-not-exist.invalid/hook',
    ];
    for (const url of bad) {
      const r = await subscribe({ url });
      expect(r.status, url).to.equal(422);
      expect(r.body.detail[0].loc, url).to.deep.equal(['body', 'url']);
    }
    expect((await subscribe({ url: rx.url, event_types: ['nonsense'] })).status).to.equal(422);
    expect((await subscribe({ url: rx.url, event_types: [] })).status).to.equal(422);
    expect((await t.request('POST', '/ops/alerts/subscriptions', { token: op, body: { event_types: ['incident'] } })).status).to.equal(422);
    expect((await t.request('GET', '/ops/alerts/subscriptions', { token: op })).body.subscriptions).to.deep.equal([]);
    expect(forbiddenAddress('fe9f::1')).to.match(/link-local/);
    expect(forbiddenAddress('fec0::1')).to.equal(null);
    expect(forbiddenAddress('127.0.0.1')).to.equal(null);
    expect(forbiddenAddress('::1')).to.equal(null);
  });

  it('checks the address again at connect time (a name re-pointed to a metadata address is refused)', async () => {
    const real = dns.lookup;
    const lookup = (host: string, options: dns.LookupOptions) =>
      new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) => safeLookup(host, options, (err, address) => resolve({ err, address })));
    (dns as { lookup: unknown }).lookup = (host: string, opts: unknown, cb: (e: null, a: dns.LookupAddress[]) => void) =>
      host === 'rebound.test' ? cb(null, [{ address: '169.254.169.254', family: 4 }]) : (real as (h: string, o: unknown, c: typeof cb) => void)(host, opts, cb);
    try {
      const bad = await lookup('rebound.test', {});
      expect(bad.err?.code).to.equal('EFORBIDDEN');
      const ok = await lookup('localhost', { all: true });
      expect(ok.err).to.equal(null);
      expect(ok.address).to.be.an('array').with.length.greaterThan(0);
      const one = await lookup('localhost', {});
      expect(one.address).to.be.a('string');
    } finally {
      (dns as { lookup: unknown }).lookup = real;
    }
  });

  it('POSTs matching events with a valid HMAC-SHA256 signature and records the attempt', async () => {
    // A host name (not an IP literal) goes through the checking lookup at connect time.
    const sub = (await subscribe({ url: `${rx.url.replace("127.0.0.1", "localhost")}/ok` })).body;
    t.host.services.events.publish('breaker_state', { kernel_id: 'llm', state: 'open', isolated: false }); // not subscribed
    const event = t.host.services.events.publish('incident', { change: 'opened', tenant_id: null, incident: { id: 'i-1' } });
    const got = await eventually(async () => rx.got.find((g) => g.path === '/ok'));
    expect(verify(sub.secret, got)).to.equal(true);
    expect(verify('whsec_wrong', got)).to.equal(false);
    expect(got.headers['content-type']).to.equal('application/json');
    expect(got.headers['x-alert-event']).to.equal('incident');
    const body = JSON.parse(got.body);
    expect(body).to.deep.include({ subscription_id: sub.id, type: 'incident', timestamp: event.timestamp, data: event.data });
    expect(got.headers['x-alert-delivery']).to.equal(body.id);
    const rows = await eventually(async () => ((await deliveries(sub.id)) as unknown[]).length === 1 && deliveries(sub.id));
    expect(rows[0]).to.include({ delivery_id: body.id, event_type: 'incident', attempt: 1, status: 'succeeded', response_status: 200, error: null, next_attempt_at: null });
    expect(rx.got.filter((g) => g.path === '/ok')).to.have.length(1);
    await remove(sub.id);
  });

  it('retries after a failing first attempt, with the same delivery id and a fresh signature', async () => {
    const sub = (await subscribe({ url: `${rx.url}/flaky` })).body;
    t.host.services.events.publish('incident', { change: 'resolved', tenant_id: null });
    const rows = await eventually(async () => {
      const d = await deliveries(sub.id);
      return d.length === 2 && d;
    });
    const [second, first] = rows;
    expect(first).to.include({ attempt: 1, status: 'failed', response_status: 503, error: 'HTTP 503' });
    expect(first.next_attempt_at).to.be.a('string');
    expect(second).to.include({ attempt: 2, status: 'succeeded', response_status: 200, next_attempt_at: null, delivery_id: first.delivery_id });
    const got = rx.got.filter((g) => g.path === '/flaky');
    expect(got).to.have.length(2);
    expect(got.every((g) => verify(sub.secret, g))).to.equal(true);
    expect(got[1].headers['x-alert-attempt']).to.equal('2');
    await remove(sub.id);
  });

  it('survives a receiver that is down or hangs: bounded attempts, each recorded, the bus unaffected', async () => {
    const down = await receiver();
    const url = down.url;
    await down.close();
    const dead = (await subscribe({ url: `${url}/gone` })).body;
    const slow = (await subscribe({ url: `${rx.url}/hang` })).body;
    let seen = 0;
    const off = t.host.services.events.subscribe('incident', () => seen++);
    t.host.services.events.publish('incident', { change: 'opened', tenant_id: null });
    off();
    expect(seen).to.equal(1);
    const rows = await eventually(async () => {
      const d = await deliveries(dead.id);
      return d.length === 3 && d;
    });
    expect(rows.map((d: { attempt: number }) => d.attempt)).to.deep.equal([3, 2, 1]);
    expect(rows.every((d: { status: string; response_status: null; error: string }) => d.status === 'failed' && d.response_status === null && /ECONNREFUSED/.test(d.error))).to.equal(true);
    expect(rows[0].next_attempt_at).to.equal(null);
    const hung = await eventually(async () => {
      const d = await deliveries(slow.id);
      return d.length >= 1 && d;
    });
    expect(hung[hung.length - 1]).to.include({ attempt: 1, status: 'failed', response_status: null });
    expect(hung[hung.length - 1].error).to.match(/no answer within 500 ms/);
    await remove(dead.id);
    await remove(slow.id);
  });

  it("delivers a tenant's events only to that tenant, platform events to all", async () => {
    const acme = (await subscribe({ url: `${rx.url}/acme` }, acmeOp)).body;
    t.host.services.events.publish('incident', { change: 'opened', tenant_id: 'platform', n: 1 });
    t.host.services.events.publish('incident', { change: 'opened', tenant_id: 'acme', n: 2 });
    t.host.services.events.publish('incident', { change: 'opened', tenant_id: null, n: 3 });
    await eventually(async () => ((await deliveries(acme.id, acmeOp)) as unknown[]).length === 2);
    const got = rx.got.filter((g) => g.path === '/acme').map((g) => JSON.parse(g.body).data.n).sort();
    expect(got).to.deep.equal([2, 3]);
    expect((await t.request('GET', `/ops/alerts/subscriptions/${acme.id}/deliveries`, { token: op })).status).to.equal(404);
    expect((await remove(acme.id, op)).status).to.equal(404);
    expect((await remove(acme.id, acmeOp)).status).to.equal(204);
  });

  it('delete: 204 then 404, 422 for a bad id; deliveries 404 after delete, 422 for a bad cursor', async () => {
    const sub = (await subscribe({ url: `${rx.url}/del` })).body;
    expect((await t.request('GET', `/ops/alerts/subscriptions/${sub.id}/deliveries?cursor=zzz`, { token: op })).status).to.equal(422);
    expect((await remove(sub.id)).status).to.equal(204);
    expect((await remove(sub.id)).status).to.equal(404);
    expect((await remove('nope')).status).to.equal(422);
    expect((await t.request('GET', `/ops/alerts/subscriptions/${sub.id}/deliveries`, { token: op })).status).to.equal(404);
    expect((await t.request('GET', '/ops/alerts/subscriptions/nope/deliveries', { token: op })).status).to.equal(422);
    t.host.services.events.publish('incident', { change: 'opened', tenant_id: null });
    await new Promise((r) => setTimeout(r, 100));
    expect(rx.got.filter((g) => g.path === '/del')).to.have.length(0);
  });
});

describe('alerts with incidents: an automatic incident reaches the receiver', () => {
  it('posts the incident opened by a breaker event, signed', async () => {
    const t = await startHost({ plugins: [alerts, incidents] });
    const rx = await receiver();
    try {
      const sub = (await t.request('POST', '/ops/alerts/subscriptions', { body: { url: `${rx.url}/pager`, event_types: ['incident'] } })).body;
      t.host.services.events.publish('breaker_state', { kernel_id: 'trading', state: 'open', isolated: false });
      const got = await eventually(async () => rx.got.find((g) => g.path === '/pager'));
      expect(verify(sub.secret, got)).to.equal(true);
      const body = JSON.parse(got.body);
      expect(body.type).to.equal('incident');
      expect(body.data).to.deep.include({ change: 'opened', tenant_id: null });
      expect(body.data.incident).to.include({ severity: 'critical', cause: 'breaker:trading', state: 'open' });
    } finally {
      await t.stop();
      await rx.close();
    }
  });
});

describe('alerts in CloudEvents format (with the interop plugin)', () => {
  it('posts structured CloudEvents 1.0 that the SDK accepts, signed like every alert; 503 without interop', async () => {
    const t = await startHost({ plugins: [alerts, interop] });
    const rx = await receiver();
    try {
      const r = await t.request('POST', '/ops/alerts/subscriptions', { body: { url: `${rx.url}/ce`, event_types: ['incident', 'workflow_status'], format: 'cloudevents' } });
      expect(r.status).to.equal(201);
      expect(r.body.format).to.equal('cloudevents');
      t.host.services.events.publish('workflow_status', { execution_id: 'e-1', workflow_id: 'w-1', tenant_id: 'platform', state: 'succeeded' });
      const got = await eventually(async () => rx.got.find((g) => g.path === '/ce'));
      expect(got.headers['content-type']).to.equal('application/cloudevents+json; charset=utf-8');
      expect(verify(r.body.secret, got)).to.equal(true);
      const ce = new CloudEvent(JSON.parse(got.body) as Record<string, unknown>);
      expect(ce.validate()).to.equal(true);
      expect(ce).to.include({ specversion: '1.0', type: 'com.platform-control.workflow_status', source: '/platform-control/stream', subject: 'e-1' });
      expect(ce.data).to.deep.equal({ execution_id: 'e-1', workflow_id: 'w-1', tenant_id: 'platform', state: 'succeeded' });
      const list = (await t.request('GET', '/ops/alerts/subscriptions')).body.subscriptions;
      expect(list.map((s: { format: string }) => s.format)).to.deep.equal(['cloudevents']);
      expect((await t.request('POST', '/ops/alerts/subscriptions', { body: { url: `${rx.url}/x`, event_types: ['incident'], format: 'xml' } })).status).to.equal(422);
    } finally {
      await t.stop();
      await rx.close();
    }
    const bare = await startHost({ plugins: [alerts] });
    try {
      const r = await bare.request('POST', '/ops/alerts/subscriptions', { body: { url: 'http://127.0.0.1:9/x', event_types: ['incident'], format: 'cloudevents' } });
      expect(r.status).to.equal(503);
      expect(r.body.code).to.equal('NOT_CONFIGURED');
      expect(await bare.host.services.db('alert_subscriptions').count({ n: '*' })).to.deep.equal([{ n: 0 }]);
    } finally {
      await bare.stop();
    }
  });
});
