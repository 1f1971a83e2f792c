import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { expect } from 'chai';
import authPlugin from '../../plugins/auth';
import kernels from '../../plugins/kernels';
import mesh from '../../plugins/mesh';
import { BUILTIN_KERNELS } from './mesh-helpers';
import { spawnHost } from '../helpers/cluster';
import { eventually } from '../helpers/eventually';
import { dropSchema, freePort, PG_URL, REDIS_URL, startHost, type TestHost } from '../helpers/host';


// Three hosts on one PostgreSQL schema and Redis: a in this process, b and c separate
// processes. A node action sent to any host is done by the host that runs the node.
describe('cluster: node control from any host, three hosts', function () {
  this.timeout(120_000);
  const schema = `t_${crypto.randomBytes(6).toString('hex')}`;
  const prefix = `pc-cluster-test-${crypto.randomBytes(4).toString('hex')}`;
  const secret = crypto.randomBytes(32).toString('hex');
  const cluster = (hostId: string, url?: string) => ({ hostId, leaseMs: 3000, prefix, controlTimeoutMs: 1000, ...(url ? { url } : {}) });
  let a: TestHost;
  const procs: Record<string, ChildProcess> = {};
  const urls: Record<string, string> = {};

  const startProc = async (id: string) => {
    const port = await freePort();
    urls[id] = `http://127.0.0.1:${port}`;
    const h = await spawnHost(id, { database: { url: PG_URL, schema }, redis: { url: REDIS_URL }, cluster: cluster(id, urls[id]), auth: { jwtSecret: secret, adminPassword: 'admin-password-for-tests' }, mesh: { kernelDirs: [BUILTIN_KERNELS], only: ['analytics'], nodesPerKernel: 1, threadsPerNode: 1 }, log: { level: 'warn' } }, port);
    procs[id] = h.proc;
  };
  const call = async (host: string, method: string, p: string, body?: unknown) => {
    if (host === 'a') return a.request(method, p, body === undefined ? {} : { body });
    const res = await fetch(urls[host] + p, { method, headers: { authorization: `Bearer ${a.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, text };
  };
  const nodeOn = async (host: string, id: string) => (await call(host, 'GET', `/mesh/nodes/${id}`)).body as { id: string; state: string; host: string };
  const ids = async (host: string) => ((await call(host, 'GET', '/mesh/nodes')).body.nodes as Array<{ id: string; state: string }>).map((n) => `${n.id}:${n.state}`).sort();

  before(async () => {
    a = await startHost({ db: 'postgres', pgSchema: schema, plugins: [authPlugin, mesh, kernels], config: { redis: { url: REDIS_URL }, cluster: cluster('a'), auth: { jwtSecret: secret }, mesh: { kernelDirs: [BUILTIN_KERNELS], only: ['analytics'] } } });
    await startProc('b');
    await startProc('c');
  });
  after(async () => {
    for (const p of Object.values(procs)) {
      p.kill('SIGCONT');
      p.kill('SIGKILL');
    }
    await a?.stop();
    await dropSchema(schema);
  });

  it('shows the same node list from every host', async () => {
    const want = ['analytics-a-1:active', 'analytics-b-1:active', 'analytics-c-1:active'];
    for (const h of ['a', 'b', 'c']) await eventually(async () => (JSON.stringify(await ids(h)) === JSON.stringify(want) ? true : null), 10_000, `host ${h}'s list`);
  });

  it("drains a node of host b through host c: b drains it, once, and every host sees it", async () => {
    const r = await call('c', 'POST', '/mesh/nodes/analytics-b-1/drain', { deadline_seconds: 1 });
    expect(r.status, r.text).to.equal(202);
    expect(r.body.node_id ?? r.body.id).to.equal('analytics-b-1');
    await eventually(async () => ((await nodeOn('b', 'analytics-b-1')).state === 'drained' ? true : null), 10_000);
    const acts = await a.host.services.db('actions').where({ target_id: 'analytics-b-1', action: 'drain_node' });
    expect(acts).to.have.length(1);
    expect(acts[0].cause).to.equal('sent through host c');
    // Resumed through host a; the answer is b's node view.
    const back = await call('a', 'POST', '/mesh/nodes/analytics-b-1/resume');
    expect(back.status, back.text).to.equal(200);
    expect(back.body).to.include({ id: 'analytics-b-1', host: 'b', state: 'active' });
  });

  it("relays the owner's refusals and checks input where the call arrives", async () => {
    // b's node is active: completing a drain that never started is b's 409, relayed as is.
    const r = await call('a', 'POST', '/mesh/nodes/analytics-b-1/drain/complete', { force: false });
    expect(r.status).to.equal(409);
    const bad = await call('a', 'POST', '/mesh/nodes/analytics-b-1/drain', { deadline_seconds: -1 });
    expect(bad.status).to.equal(422);
    expect((await call('a', 'POST', '/mesh/nodes/analytics-z-1/pause')).status).to.equal(404);
    const status = await call('a', 'GET', '/mesh/nodes/analytics-b-1/drain/status');
    expect(status.status).to.equal(200);
  });

  it('answers 504 when the owner does not answer in time (the action may still happen there)', async () => {
    procs.c!.kill('SIGSTOP');
    try {
      const r = await call('a', 'POST', '/mesh/nodes/analytics-c-1/pause');
      expect(r.status).to.equal(504);
      expect(r.body.code).to.equal('OWNER_TIMEOUT');
      expect(r.body.detail).to.match(/^Host c, which runs node analytics-c-1, did not answer within 1000 ms/);
    } finally {
      procs.c!.kill('SIGCONT');
    }
    // Woken up, c does what it was asked.
    await eventually(async () => ((await nodeOn('c', 'analytics-c-1')).state === 'paused' ? true : null), 10_000);
    expect((await call('b', 'POST', '/mesh/nodes/analytics-c-1/resume')).status).to.equal(200);
  });

  it("answers 409 for a node of a killed host, serves tasks elsewhere, and sees the host come back", async () => {
    procs.b!.kill('SIGKILL');
    await eventually(async () => ((await nodeOn('c', 'analytics-b-1')).state === 'lost' ? true : null), 15_000);
    const r = await call('c', 'POST', '/mesh/nodes/analytics-b-1/pause');
    expect(r.status).to.equal(409);
    expect(r.body.code).to.equal('NODE_HOST_LOST');
    expect((await call('c', 'POST', '/kernels/analytics/tasks/describe', { values: [1, 2, 3] })).status).to.equal(200);
    await startProc('b');
    await eventually(async () => ((await nodeOn('c', 'analytics-b-1')).state === 'active' ? true : null), 15_000);
  });
});
