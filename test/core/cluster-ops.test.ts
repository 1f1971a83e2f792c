import crypto from 'node:crypto';
import { expect } from 'chai';
import authPlugin from '../../plugins/auth';
import chaosPlugin from '../../plugins/chaos';
import { chaosEngineRef } from '../../plugins/chaos/engine/service';
import workflowsPlugin from '../../plugins/workflows';
import { BUILTIN_KERNELS, FIXTURE_KERNELS, MESH_PLUGINS } from './mesh-helpers';
import { def, ended, FAST_CHAOS, phase } from '../plugins/chaos-helpers';
import { spawnHost, type HostProcess } from '../helpers/cluster';
import { eventually } from '../helpers/eventually';
import { dropSchema, PG_URL, REDIS_URL, startHost, type TestHost } from '../helpers/host';

// Two hosts on one PostgreSQL schema and Redis, each running one node of the probe kernel: a
// in this process, b a separate process. Stats, kernel-wide actions, node creation, chaos
// experiments and workflow cancel sent to one host act on the other's nodes and runs.
describe('cluster: stats, kernel actions, chaos and workflow cancel across hosts', function () {
  this.timeout(120_000);
  const schema = `t_${crypto.randomBytes(6).toString('hex')}`;
  const prefix = `pc-cluster-test-${crypto.randomBytes(4).toString('hex')}`;
  const secret = crypto.randomBytes(32).toString('hex');
  const cluster = (hostId: string) => ({ hostId, leaseMs: 1500, prefix, controlTimeoutMs: 3000 });
  const meshCfg = { kernelDirs: [BUILTIN_KERNELS, FIXTURE_KERNELS], only: ['probe'], heartbeatMs: 100, noNodeWaitMs: 300, kernels: { probe: { nodes: 1, threads: 2 } } };
  let a: TestHost;
  let b: HostProcess;

  const call = async (host: 'a' | 'b', method: string, p: string, body?: unknown, token: string | null = a.adminToken) => {
    if (host === 'a') return a.request(method, p, { token, ...(body === undefined ? {} : { body }) });
    const res = await fetch(b.url + p, { method, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, text };
  };
  const nodeOnB = async (id: string) => (await call('b', 'GET', `/mesh/nodes/${id}`)).body as { id: string; state: string; control: Record<string, number> | null; in_flight: number };
  // Polls host b at most every 150 ms: every host shares the tenant's rate-limit budget in Redis.
  const untilOnB = (id: string, check: (n: Awaited<ReturnType<typeof nodeOnB>>) => boolean, what: string) =>
    eventually(async () => {
      await new Promise((r) => setTimeout(r, 150));
      return check(await nodeOnB(id)) ? true : null;
    }, 10_000, what);
  const experiment = (id: string) => a.host.service(chaosEngineRef).get('platform', id);

  before(async () => {
    a = await startHost({ db: 'postgres', pgSchema: schema, plugins: [authPlugin, ...MESH_PLUGINS, chaosPlugin, workflowsPlugin], config: { redis: { url: REDIS_URL }, cluster: cluster('a'), auth: { jwtSecret: secret }, mesh: meshCfg, chaos: FAST_CHAOS } });
    b = await spawnHost('b', { database: { url: PG_URL, schema }, redis: { url: REDIS_URL }, cluster: cluster('b'), auth: { jwtSecret: secret, adminPassword: 'admin-password-for-tests' }, mesh: meshCfg, chaos: FAST_CHAOS, log: { level: 'warn' } });
    await eventually(() => (a.host.services.mesh.nodes().some((n) => n.id === 'probe-b-1' && n.state === 'active') ? true : null), 10_000, 'host a to see b');
  });
  after(async () => {
    b?.proc.kill('SIGKILL');
    await a?.stop();
    await dropSchema(schema);
  });

  it('/mesh/stats and /ops/stats add up every host: counters, each node from its host, merged timings', async () => {
    for (let i = 0; i < 3; i++) expect((await call('b', 'POST', '/kernels/probe/tasks/wait', { ms: 5 })).status).to.equal(200);
    for (let i = 0; i < 2; i++) expect((await call('a', 'POST', '/kernels/probe/tasks/wait', { ms: 5 })).status).to.equal(200);
    for (const host of ['a', 'b'] as const) {
      const r = await call(host, 'GET', '/mesh/stats');
      expect(r.status, r.text).to.equal(200);
      expect(r.body.hosts).to.deep.equal(['a', 'b']);
      const k = r.body.kernels.find((x: { kernel_id: string }) => x.kernel_id === 'probe');
      const nodes = Object.fromEntries(k.nodes.map((n: { node_id: string; host: string; tasks_run: number }) => [n.node_id, [n.host, n.tasks_run]]));
      expect(nodes).to.deep.equal({ 'probe-a-1': ['a', 2], 'probe-b-1': ['b', 3] });
      expect(k.tasks_run).to.equal(5);
      expect(r.body.totals.tasks_run).to.equal(5);
      expect(k.run_time_ms.count).to.equal(5);
      // Each task waits 5 ms on its worker: every merged percentile is at least that.
      expect(k.run_time_ms.p50).to.be.at.least(5);
      expect(k.run_time_ms.p99).to.be.at.least(k.run_time_ms.p50);
      expect(k.run_time_ms.max).to.be.at.least(k.run_time_ms.p99);
    }
    const ops = await call('a', 'GET', '/ops/stats');
    expect(ops.body.mesh.hosts).to.deep.equal(['a', 'b']);
    expect(ops.body.mesh.totals.tasks_run).to.equal(5);
    expect((await call('a', 'GET', '/mesh/stats', undefined, null)).status).to.equal(401);
  });

  it('pauses, resumes, isolates and restores a kernel on every host from one; each host records its part', async () => {
    const r = await call('a', 'POST', '/ops/kernels/probe/pause');
    expect(r.status, r.text).to.equal(200);
    expect([...r.body.changed].sort()).to.deep.equal(['probe-a-1', 'probe-b-1']);
    expect(r.body.kernel.nodes.map((n: { id: string; state: string }) => `${n.id}:${n.state}`).sort()).to.deep.equal(['probe-a-1:paused', 'probe-b-1:paused']);
    expect((await nodeOnB('probe-b-1')).state).to.equal('paused');
    const again = await call('a', 'POST', '/ops/kernels/probe/pause');
    expect(again.status).to.equal(409);
    expect(again.body.detail).to.match(/host a: .*; host b: /);
    const back = await call('b', 'POST', '/ops/kernels/probe/resume');
    expect(back.status, back.text).to.equal(200);
    expect([...back.body.changed].sort()).to.deep.equal(['probe-a-1', 'probe-b-1']);
    expect(a.host.services.mesh.node('probe-a-1').state).to.equal('active');
    const acts = await a.host.services.db('actions').where({ action: 'pause_kernel', result: 'succeeded' });
    expect(acts.map((x: { cause: string | null }) => String(x.cause)).sort()).to.deep.equal(['null', 'sent through host a']);
    // Breakers are per host: isolating through b opens both, and every host's list shows each.
    const iso = await call('b', 'POST', '/ops/kernels/probe/isolate');
    expect(iso.status, iso.text).to.equal(200);
    expect(iso.body.breaker).to.deep.equal({ state: 'open', isolated: true });
    expect(a.host.services.mesh.breakers().probe).to.deep.equal({ state: 'open', isolated: true });
    const breakers = async () => Object.fromEntries(((await call('a', 'GET', '/mesh/hosts')).body.hosts as Array<{ host_id: string; breakers: Record<string, { isolated: boolean }> }>).map((h) => [h.host_id, h.breakers.probe?.isolated]));
    await eventually(async () => (JSON.stringify(await breakers()) === JSON.stringify({ a: true, b: true }) ? true : null), 5000, 'both breakers open in the hosts list');
    expect((await call('a', 'POST', '/ops/kernels/probe/isolate')).status).to.equal(409);
    expect((await call('a', 'POST', '/ops/kernels/probe/restore')).status).to.equal(200);
    await eventually(async () => (JSON.stringify(await breakers()) === JSON.stringify({ a: false, b: false }) ? true : null), 5000, 'both breakers closed');
    expect((await call('a', 'POST', '/ops/kernels/nope/pause')).status).to.equal(404);
    expect((await call('a', 'POST', '/ops/kernels/probe/pause', undefined, null)).status).to.equal(401);
  });

  it('adds a node on another host through POST /mesh/nodes with host', async () => {
    const r = await call('a', 'POST', '/mesh/nodes', { kernel_id: 'probe', threads: 1, host: 'b' });
    expect(r.status, r.text).to.equal(201);
    expect(r.body).to.include({ id: 'probe-b-2', host: 'b', threads: 1 });
    expect((await nodeOnB('probe-b-2')).state).to.equal('active');
    // Host a learns of it at b's next heartbeat.
    await eventually(() => (a.host.services.mesh.nodes().some((n) => n.id === 'probe-b-2') ? true : null), 5000, 'host a to see the new node');
    expect((await call('a', 'POST', '/mesh/nodes', { kernel_id: 'probe', host: 'zz' })).status).to.equal(404);
    expect((await call('a', 'POST', '/mesh/nodes', { kernel_id: 'probe', host: 'B!' })).status).to.equal(422);
    // Drained and removed through a as well.
    expect((await call('a', 'POST', '/mesh/nodes/probe-b-2/drain', { deadline_seconds: 1 })).status).to.equal(202);
    await untilOnB('probe-b-2', (n) => n.state === 'drained', 'the node to drain');
    expect((await call('a', 'DELETE', '/mesh/nodes/probe-b-2')).status).to.equal(204);
    expect((await call('b', 'GET', '/mesh/nodes/probe-b-2')).status).to.equal(404);
    await eventually(() => (a.host.services.mesh.nodes().some((n) => n.id === 'probe-b-2') ? null : true), 5000, 'host a to see it gone');
  });

  it("injects a chaos fault on the other host's node, probes there too, and rolls it back there", async () => {
    const engine = a.host.service(chaosEngineRef);
    const live = await engine.begin(def({ injection_type: 'error', parameters: { error_rate: 1, node_share: 1 }, duration_seconds: 1 }), { id: 'tester', tenantId: 'platform' });
    await untilOnB('probe-b-1', (n) => n.control?.error_rate === 1, "b's node to get the fault");
    const e = await ended(a, live.id);
    expect(e.status).to.equal('completed');
    expect(e.deviated).to.equal(true);
    expect(e.injections.map((i) => i.node_id).sort()).to.deep.equal(['probe-a-1', 'probe-b-1']);
    expect(e.injections.every((i) => i.applied_at && i.rolled_back_at && i.rollback_note === null)).to.equal(true);
    // FAST_CHAOS probes 8 times a round on each host that runs the kernel.
    expect(e.steady_state.before!.domains.probe.probes).to.equal(16);
    expect(e.steady_state.during!.domains.probe.success_ratio).to.equal(0);
    expect((await nodeOnB('probe-b-1')).control).to.equal(null);
  });

  it('aborts an experiment through the other host, and halts every host from one', async () => {
    const engine = a.host.service(chaosEngineRef);
    const slow = def({ injection_type: 'latency', parameters: { latency_ms: 30, node_share: 1 }, duration_seconds: 60, hypothesis: { description: 'test', min_success_ratio: 0, max_latency_p99_ms: 10_000 } });
    const one = await engine.begin(slow, { id: 'tester', tenantId: 'platform' });
    await phase(a, one.id, 'injected');
    expect((await nodeOnB('probe-b-1')).control?.latency_ms).to.equal(30);
    expect((await call('b', 'POST', `/ops/resilience/experiments/${one.id}/abort`, undefined, null)).status).to.equal(401);
    const r = await call('b', 'POST', `/ops/resilience/experiments/${one.id}/abort`);
    expect(r.status, r.text).to.equal(200);
    expect(r.body.status).to.equal('aborted');
    expect((await nodeOnB('probe-b-1')).control).to.equal(null);
    expect(a.host.services.mesh.node('probe-a-1').control).to.equal(null);

    const two = await engine.begin(slow, { id: 'tester', tenantId: 'platform' });
    await phase(a, two.id, 'injected');
    const h = await call('b', 'POST', '/ops/resilience/halt');
    expect(h.status, h.text).to.equal(200);
    expect(h.body.halted).to.deep.equal([two.id]);
    expect(h.body.halted_total).to.equal(1);
    expect(h.body.injections_removed).to.equal(2);
    expect((await experiment(two.id)).status).to.equal('aborted');
    expect((await nodeOnB('probe-b-1')).control).to.equal(null);
  });

  it("cancels through host a a workflow execution host b runs: b aborts the running task", async () => {
    const wf = await call('b', 'POST', '/api/workflows', { name: 'slow on b', steps: [{ id: 'slow', kernel: 'probe', task: 'wait', input: { ms: 30_000 } }] });
    expect(wf.status, wf.text).to.equal(201);
    const run = await call('b', 'POST', `/workflows/${wf.body.id}/run`);
    expect(run.status, run.text).to.equal(202);
    const id = run.body.id as string;
    await untilOnB('probe-b-1', (n) => n.in_flight === 1, 'the step to run on b');
    expect((await a.host.services.db('workflow_executions').where({ id }).first()).host).to.equal('b');
    const r = await call('a', 'POST', `/ops/workflows/${id}/cancel`);
    expect(r.status, r.text).to.equal(200);
    expect(r.body.state).to.equal('cancelled');
    expect(r.body.steps.map((s: { state: string }) => s.state)).to.deep.equal(['cancelled']);
    expect((await nodeOnB('probe-b-1')).in_flight).to.equal(0);
    expect((await call('a', 'POST', `/ops/workflows/${id}/cancel`)).status).to.equal(409);
  });

  it("fails the executions of a host that stops heartbeating (killed)", async () => {
    const wf = await call('b', 'POST', '/api/workflows', { name: 'dies with b', steps: [{ id: 'slow', kernel: 'probe', task: 'wait', input: { ms: 30_000 } }] });
    const id = (await call('b', 'POST', `/workflows/${wf.body.id}/run`)).body.id as string;
    await untilOnB('probe-b-1', (n) => n.in_flight === 1, 'the step to run on b');
    b.proc.kill('SIGKILL');
    const e = await eventually(async () => {
      const r = await a.request('GET', `/ops/workflows/${id}`);
      return r.body.state === 'failed' ? r.body : null;
    }, 15_000, 'the execution to fail');
    expect(e.error).to.equal('host b, which ran the execution, stopped heartbeating');
    expect(e.steps[0].state).to.equal('failed');
  });
});
