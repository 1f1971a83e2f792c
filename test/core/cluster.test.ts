import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { expect } from 'chai';
import type { BusEvent } from '../../core/events';
import authPlugin from '../../plugins/auth';
import kernels from '../../plugins/kernels';
import health from '../../plugins/health';
import mesh from '../../plugins/mesh';
import { BUILTIN_KERNELS } from './mesh-helpers';
import { spawnHost } from '../helpers/cluster';
import { eventually } from '../helpers/eventually';
import { dropSchema, PG_URL, REDIS_URL, startHost, type TestHost } from '../helpers/host';


// Two hosts on one PostgreSQL schema and one Redis: host a in this process, host b a separate
// process that the test kills with SIGKILL and starts again.
describe('cluster registry: hosts see each other\'s nodes; a killed host\'s nodes are lost', function () {
  this.timeout(120_000);
  const schema = `t_${crypto.randomBytes(6).toString('hex')}`;
  const prefix = `pc-cluster-test-${crypto.randomBytes(4).toString('hex')}`;
  const secret = crypto.randomBytes(32).toString('hex');
  const cluster = (hostId: string) => ({ hostId, leaseMs: 900, prefix });
  let a: TestHost;
  let b: ChildProcess | null = null;
  const events: BusEvent[] = [];

  const startB = async () => (await spawnHost('b', { database: { url: PG_URL, schema }, redis: { url: REDIS_URL }, cluster: cluster('b'), auth: { jwtSecret: secret, adminPassword: 'admin-password-for-tests' }, mesh: { kernelDirs: [BUILTIN_KERNELS], only: ['analytics'], nodesPerKernel: 1, threadsPerNode: 1 }, log: { level: 'warn' } })).proc;
  const nodes = async () => (await a.request('GET', '/mesh/nodes')).body.nodes as Array<{ id: string; state: string; host: string | null }>;

  before(async () => {
    a = await startHost({ db: 'postgres', pgSchema: schema, plugins: [authPlugin, health, mesh, kernels], config: { redis: { url: REDIS_URL }, cluster: cluster('a'), auth: { jwtSecret: secret }, mesh: { kernelDirs: [BUILTIN_KERNELS], only: ['analytics'] } } });
    a.host.services.events.subscribe('cluster.host_lost', (e) => events.push(e));
  });
  after(async () => {
    b?.kill('SIGKILL');
    await a?.stop();
    await dropSchema(schema);
  });

  it("lists the other host's nodes with their host; ids carry the host id", async () => {
    b = await startB();
    const all = await eventually(async () => {
      const n = await nodes();
      return n.some((x) => x.id === 'analytics-b-1') ? n : null;
    }, 10_000);
    expect(all.map((n) => [n.id, n.host, n.state]).sort()).to.deep.equal([['analytics-a-1', 'a', 'active'], ['analytics-b-1', 'b', 'active']]);
    const health = await a.request('GET', '/health/', { token: null });
    expect(health.body.components.cluster).to.equal('healthy');
    expect(health.body.details.cluster.detail).to.deep.include({ this_host: 'a', hosts: 2, live_hosts: 2, lost_hosts: [] });
  });

  it('marks a killed host\'s nodes lost within its lease, raises one incident and an event, and still serves tasks', async () => {
    b!.kill('SIGKILL');
    const lost = await eventually(async () => (await nodes()).find((n) => n.id === 'analytics-b-1' && n.state === 'lost'), 10_000);
    expect(lost).to.include({ host: 'b' });
    await eventually(() => events.length > 0, 5_000);
    expect(events[0].data).to.deep.include({ host_id: 'b', nodes: ['analytics-b-1'] });
    const incidents = await a.host.services.db('health_incidents').where({ node_id: 'analytics-b-1' });
    expect(incidents).to.have.length(1);
    const health = await a.request('GET', '/health/', { token: null });
    expect(health.body.status).to.equal('degraded');
    expect(health.body.components.cluster).to.equal('degraded');
    expect(health.body.details.cluster.detail).to.deep.include({ live_hosts: 1, lost_hosts: ['b'], reason: 'host b stopped heartbeating' });
    const task = await a.request('POST', '/kernels/analytics/tasks/describe', { body: { values: [1, 2, 3] } });
    expect(task.status).to.equal(200);
  });

  it('a restarted host re-registers: its node is active again', async () => {
    b = await startB();
    await eventually(async () => (await nodes()).some((n) => n.id === 'analytics-b-1' && n.state === 'active'), 10_000);
  });
});
