import crypto from 'node:crypto';
import { expect } from 'chai';
import authPlugin from '../../plugins/auth';
import kernels from '../../plugins/kernels';
import mesh from '../../plugins/mesh';
import { BUILTIN_KERNELS } from './mesh-helpers';
import { eventually } from '../helpers/eventually';
import { dropSchema, freePort, REDIS_URL, startHost, type TestHost } from '../helpers/host';

// Two hosts on one PostgreSQL schema and Redis: a runs only the analytics kernel, b only
// trading. A trading task sent to a is forwarded to b and answered as b answers it.
describe('cluster: tasks forwarded to a host that runs the kernel; the hosts list', function () {
  this.timeout(60_000);
  const schema = `t_${crypto.randomBytes(6).toString('hex')}`;
  const prefix = `pc-cluster-test-${crypto.randomBytes(4).toString('hex')}`;
  const shared = {
    redis: { url: REDIS_URL },
    auth: { jwtSecret: crypto.randomBytes(32).toString('hex') },
    limits: { redisPrefix: `pc-test-fwd-${crypto.randomBytes(4).toString('hex')}` },
    plans: { enterprise: { requestsPerMinute: 10_000 } },
  };
  let a: TestHost;
  let b: TestHost;
  const option = { type: 'call', spot: 100, strike: 100, rate: 0.01, volatility: 0.2, time_years: 1 };

  before(async () => {
    const host = async (id: string, only: string[]) => {
      const port = await freePort();
      return startHost({
        db: 'postgres', pgSchema: schema, plugins: [authPlugin, mesh, kernels],
        config: { ...shared, server: { port }, cluster: { hostId: id, url: `http://127.0.0.1:${port}`, leaseMs: 900, prefix }, mesh: { kernelDirs: [BUILTIN_KERNELS], only } },
      });
    };
    a = await host('a', ['analytics']);
    b = await host('b', ['trading']);
    await eventually(async () => ((await a.request('GET', '/mesh/hosts')).body.hosts.length === 2 ? true : null), 10_000);
  });
  after(async () => {
    await b?.stop();
    await a?.stop();
    await dropSchema(schema);
  });

  it('lists the hosts of the cluster from any host', async () => {
    const r = await a.request('GET', '/mesh/hosts');
    expect(r.status).to.equal(200);
    expect(r.body.hosts.map((h: { host_id: string; live: boolean; nodes: number; this_host: boolean }) => [h.host_id, h.live, h.nodes, h.this_host])).to.deep.equal([['a', true, 1, true], ['b', true, 1, false]]);
    expect((await a.request('GET', '/mesh/hosts', { token: null })).status).to.equal(401);
  });

  it('forwards a task to the host that runs the kernel and relays its answer, errors included', async () => {
    const r = await a.request('POST', '/kernels/trading/tasks/price_option', { body: option });
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('x-served-by')).to.equal('b');
    expect(r.body.output.price).to.be.closeTo(8.43, 0.01);
    // Run on b: its outcome is b's node's.
    await eventually(async () => ((await b.host.services.db('task_outcomes').where({ kernel_id: 'trading' })).some((o) => String(o.node_id).startsWith('trading-b-')) ? true : null));
    const bad = await a.request('POST', '/kernels/trading/tasks/price_option', { body: { ...option, spot: -1 } });
    expect(bad.status).to.equal(422);
    expect(bad.headers.get('x-served-by')).to.equal('b');
    expect(bad.body.code).to.equal('VALIDATION_ERROR');
    expect((await a.request('POST', '/kernels/trading/tasks/price_option', { body: option, token: null })).status).to.equal(401);
    // A kernel no host runs is not forwarded.
    expect((await a.request('POST', '/kernels/nope/tasks/run', { body: {} })).status).to.equal(404);
  });

  it('takes the tenant\'s rate-limit budget once for a forwarded task; a forged forward header is not trusted', async () => {
    const remaining = async () => Number((await b.request('GET', '/kernels/')).headers.get('x-ratelimit-remaining'));
    const r1 = await remaining();
    expect((await a.request('POST', '/kernels/trading/tasks/price_option', { body: option })).status).to.equal(200);
    const r2 = await remaining();
    expect(r1 - r2).to.equal(2); // the forwarded task (counted on a) and this read on b
    const forged = await b.request('POST', '/kernels/trading/tasks/price_option', { body: option, headers: { 'x-pc-forwarded': `a req-1 ${Date.now()} AAAA` } });
    expect(forged.status).to.equal(200);
    expect(forged.headers.get('x-ratelimit-remaining')).to.not.equal(null);
  });

  it('answers 503 when no host has an active node of the kernel', async () => {
    const node = (await b.request('GET', '/mesh/nodes')).body.nodes.find((n: { kernel_id: string; host: string }) => n.kernel_id === 'trading' && n.host === 'b');
    expect((await b.request('POST', `/mesh/nodes/${node.id}/pause`)).status).to.equal(200);
    try {
      // Once a has seen b's heartbeat with the node paused, it has no host to send the task to.
      await eventually(async () => ((await a.request('GET', '/mesh/nodes')).body.nodes.some((n: { id: string; state: string }) => n.id === node.id && n.state === 'paused') ? true : null), 10_000);
      const r = await a.request('POST', '/kernels/trading/tasks/price_option', { body: option });
      expect(r.status).to.equal(503);
      expect(r.body.code).to.equal('NO_ACTIVE_NODE');
      expect(r.body.detail).to.equal('No host of the cluster has an active node of kernel trading');
    } finally {
      await b.request('POST', `/mesh/nodes/${node.id}/resume`);
    }
  });
});

describe('GET /mesh/hosts on a single host', () => {
  let h: TestHost;
  before(async () => {
    h = await startHost({ plugins: [authPlugin, mesh, kernels], config: { mesh: { kernelDirs: [BUILTIN_KERNELS], only: ['analytics'] } } });
  });
  after(() => h?.stop());

  it('lists this host alone, without an id', async () => {
    const r = await h.request('GET', '/mesh/hosts');
    expect(r.status).to.equal(200);
    expect(r.body.hosts).to.have.length(1);
    expect(r.body.hosts[0]).to.include({ host_id: null, url: null, live: true, nodes: 1, this_host: true });
    const viewer = (await h.userToken('viewer')).token;
    expect((await h.request('GET', '/mesh/hosts', { token: viewer })).status).to.equal(200);
    expect((await h.request('GET', '/mesh/hosts?x=1', { token: null })).status).to.equal(401);
  });
});
