import { expect } from 'chai';
import http from 'node:http';
import type { Worker } from 'node:worker_threads';
import type { TestHost } from '../helpers/host';
import { openStream, sleep, startMeshHost } from './mesh-helpers';
import { eventually } from '../helpers/eventually';

describe('mesh: nodes, routing and control', () => {
  let t: TestHost;
  let operator: string;
  let viewer: string;
  before(async () => {
    t = await startMeshHost(['probe', 'analytics'], { kernels: { analytics: { nodes: 2 } }, noNodeWaitMs: 1000 });
    operator = (await t.userToken('operator')).token;
    viewer = (await t.userToken('viewer')).token;
    await eventually(() => t.host.services.mesh.nodes().every((n) => n.health === 'healthy'), 5000, 'healthy nodes');
  });
  after(() => t.stop());

  it('lists nodes with readable ids, live threads and heartbeats measured in the workers', async () => {
    const r = await t.request('GET', '/mesh/nodes', { token: viewer });
    expect(r.status).to.equal(200);
    expect(r.body.nodes.map((n: any) => n.id)).to.deep.equal(['analytics-1', 'analytics-2', 'probe-1']);
    const n = r.body.nodes[0];
    expect(n).to.include({ kernel_id: 'analytics', state: 'active', health: 'healthy', threads: 1 });
    expect(n.live_threads).to.have.length(1);
    expect(n.live_threads[0].thread_id).to.be.a('number').above(0);
    expect(Date.parse(n.live_threads[0].last_heartbeat_at)).to.be.closeTo(Date.now(), 2000);
    expect(n.live_threads[0].heap_used_bytes).to.be.above(0);
    const page = await t.request('GET', '/mesh/nodes?limit=2', { token: viewer });
    expect(page.body.nodes).to.have.length(2);
    const rest = await t.request('GET', `/mesh/nodes?limit=2&cursor=${page.body.next_cursor}`, { token: viewer });
    expect(rest.body.nodes.map((x: any) => x.id)).to.deep.equal(['probe-1']);
    expect((await t.request('GET', '/mesh/nodes?kernel_id=probe', { token: viewer })).body.nodes).to.have.length(1);
    expect((await t.request('GET', '/mesh/nodes?state=bogus', { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', '/mesh/nodes', { token: null })).status).to.equal(401);
    const one = await t.request('GET', '/mesh/nodes/probe-1', { token: viewer });
    expect(one.body).to.include({ id: 'probe-1', kernel_id: 'probe' });
    expect((await t.request('GET', '/mesh/nodes/probe-9', { token: viewer })).status).to.equal(404);
    expect((await t.request('GET', '/mesh/nodes/NOT_AN_ID', { token: viewer })).status).to.equal(422);
  });

  it('routes tasks to the least busy node: concurrent tasks spread over both nodes', async () => {
    const runs = await Promise.all([1, 2, 3, 4].map(() => t.request('POST', '/kernels/analytics/tasks/describe', { body: { values: [1, 2, 3] } })));
    expect(runs.map((r) => r.status)).to.deep.equal([200, 200, 200, 200]);
    const stats = (await t.request('GET', '/mesh/stats', { token: viewer })).body;
    const analytics = stats.kernels.find((k: any) => k.kernel_id === 'analytics');
    expect(analytics.tasks_run).to.be.at.least(4);
    expect(analytics.nodes.map((n: any) => n.tasks_run).every((x: number) => x >= 1)).to.equal(true);
    expect(analytics.run_time_ms.count).to.be.at.least(4);
    expect(analytics.run_time_ms.p50).to.be.above(0);
  });

  it('drain waits for a long task; complete is refused until it ends, then the threads are gone; resume brings new threads', async () => {
    const mesh = t.host.services.mesh;
    const node = mesh.nodeOf('probe-1').node;
    const oldThreads: Worker[] = [...node.pool!.threads];
    const oldIds = oldThreads.map((w) => w.threadId);
    expect(oldIds.every((id) => id > 0)).to.equal(true);
    const long = t.request('POST', '/kernels/probe/tasks/wait', { body: { ms: 1500 } });
    await eventually(() => node.inFlight === 1, 2000, 'task in flight');
    const started = await t.request('POST', '/mesh/nodes/probe-1/drain', { token: operator, body: { deadline_seconds: 60 } });
    expect(started.status).to.equal(202);
    expect(started.body).to.include({ state: 'draining', in_flight: 1, completed: 0, force: false });
    expect(Date.parse(started.body.deadline) - Date.parse(started.body.started_at)).to.equal(60_000);
    const refused = await t.request('POST', '/mesh/nodes/probe-1/drain/complete', { token: operator });
    expect(refused.status).to.equal(409);
    expect(refused.body.detail).to.match(/1 task\(s\) in flight/);
    // A new task finds no eligible node and gets 503 after the bounded wait.
    const blocked = await t.request('POST', '/kernels/probe/tasks/wait', { body: { ms: 1 } });
    expect(blocked.status).to.equal(503);
    expect(blocked.body.detail).to.match(/no active node.*draining 1.*waited 1000 ms/);
    expect((await long).status).to.equal(200);
    const status = await t.request('GET', '/mesh/nodes/probe-1/drain/status', { token: viewer });
    expect(status.body).to.include({ state: 'draining', in_flight: 0, completed: 1, progress: 1 });
    const done = await t.request('POST', '/mesh/nodes/probe-1/drain/complete', { token: operator });
    expect(done.status).to.equal(200);
    expect(done.body).to.include({ state: 'drained', health: 'unknown' });
    expect(done.body.live_threads).to.deep.equal([]);
    // The pool is destroyed: every old worker thread has exited (threadId is -1 once a thread is gone).
    expect(node.pool).to.equal(null);
    expect(oldThreads.map((w) => w.threadId)).to.deep.equal(oldThreads.map(() => -1));
    const resumed = await t.request('POST', '/mesh/nodes/probe-1/resume', { token: operator });
    expect(resumed.status).to.equal(200);
    expect(resumed.body.state).to.equal('active');
    const served = await t.request('POST', '/kernels/probe/tasks/wait', { body: { ms: 1 } });
    expect(served.status).to.equal(200);
    expect(oldIds).to.not.include(served.body.output.thread_id);
    expect(node.pool!.threads.map((w) => w.threadId)).to.include(served.body.output.thread_id);
    const history = await t.host.services.actions.list({ limit: 10, target_id: 'probe-1' });
    expect(history.actions.map((a) => `${a.action}:${a.result}`)).to.deep.equal(['resume_node:succeeded', 'complete_drain:succeeded', 'complete_drain:refused', 'drain_node:succeeded']);
  });

  it('a client that closes its connection cancels its task at once', async () => {
    const node = t.host.services.mesh.nodeOf('probe-1').node;
    const before = node.tasksRun + node.tasksFailed;
    const { token } = await t.userToken('member');
    const req = http.request(`${t.url}/kernels/probe/tasks/wait`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ ms: 10_000 }));
    await eventually(() => node.inFlight === 1, 2000, 'task in flight');
    req.destroy();
    await eventually(() => node.inFlight === 0, 2000, 'task aborted');
    // Cancelled, not failed: it counts neither as run nor against the node's health.
    expect(node.tasksRun + node.tasksFailed).to.equal(before + 1);
    expect(node.tasksFailed).to.equal(0);
    await eventually(() => node.eligible && node.liveThreads.size === 1, 5000, 'thread replaced');
  });

  it('a forced complete aborts the tasks in flight', async () => {
    const long = t.request('POST', '/kernels/probe/tasks/wait', { body: { ms: 10_000 } });
    const node = t.host.services.mesh.nodeOf('probe-1').node;
    await eventually(() => node.inFlight === 1, 2000, 'task in flight');
    expect((await t.request('POST', '/mesh/nodes/probe-1/drain', { token: operator, body: {} })).status).to.equal(202);
    const forced = await t.request('POST', '/mesh/nodes/probe-1/drain/complete', { token: operator, body: { force: true } });
    expect(forced.status).to.equal(200);
    expect(forced.body.state).to.equal('drained');
    const aborted = await long;
    expect(aborted.status).to.equal(503);
    expect(aborted.body.detail).to.match(/drained by force/);
    expect((await t.request('POST', '/mesh/nodes/probe-1/resume', { token: operator })).status).to.equal(200);
  });

  it('refuses transitions the state forbids with 409 and the reason', async () => {
    const post = (p: string, body?: unknown) => t.request('POST', `/mesh/nodes/probe-1${p}`, { token: operator, body });
    expect((await post('/resume')).body.detail).to.equal('Node probe-1 is already active');
    expect((await post('/drain/abort')).status).to.equal(409);
    expect((await post('/drain/complete')).status).to.equal(409);
    expect((await post('/pause')).status).to.equal(200);
    const again = await post('/pause');
    expect(again.status).to.equal(409);
    expect(again.body.detail).to.equal('Node probe-1 is already paused');
    expect((await post('/drain', {})).status).to.equal(202);
    expect((await post('/pause')).body.detail).to.match(/draining; abort the drain first/);
    expect((await post('/resume')).body.detail).to.match(/use drain\/abort/);
    const aborted = await post('/drain/abort');
    expect(aborted.status).to.equal(200);
    expect(aborted.body.state).to.equal('active');
    expect((await post('/drain', { deadline_seconds: 0 })).status).to.equal(422);
    expect((await post('/drain', { unknown: 1 })).status).to.equal(422);
    expect((await t.request('POST', '/mesh/nodes/probe-7/pause', { token: operator })).status).to.equal(404);
  });

  it('control needs the operator role; reads need a token', async () => {
    expect((await t.request('POST', '/mesh/nodes/probe-1/pause', { token: viewer })).status).to.equal(403);
    expect((await t.request('POST', '/mesh/nodes/probe-1/pause', { token: null })).status).to.equal(401);
    expect((await t.request('POST', '/ops/kernels/probe/pause', { token: viewer })).status).to.equal(403);
    expect((await t.request('GET', '/mesh/nodes/probe-1/drain/status', { token: null })).status).to.equal(401);
    expect((await t.request('GET', '/mesh/stats', { token: null })).status).to.equal(401);
    expect((await t.request('GET', '/mesh/health', { token: viewer })).status).to.equal(200);
  });

  it('a task waits a bounded time for a node: it runs when the kernel resumes within the wait', async () => {
    expect((await t.request('POST', '/ops/kernels/probe/pause', { token: operator })).status).to.equal(200);
    const pending = t.request('POST', '/kernels/probe/tasks/wait', { body: { ms: 1 } });
    await sleep(100);
    const resumed = await t.request('POST', '/ops/kernels/probe/resume', { token: operator });
    expect(resumed.status).to.equal(200);
    expect(resumed.body.changed).to.deep.equal(['probe-1']);
    expect((await pending).status).to.equal(200);
  });

  it('kernel pause/resume/drain act on all nodes; 409 when no node can; 404 for an unknown kernel', async () => {
    const paused = await t.request('POST', '/ops/kernels/analytics/pause', { token: operator });
    expect(paused.status).to.equal(200);
    expect(paused.body.changed).to.deep.equal(['analytics-1', 'analytics-2']);
    expect(paused.body.kernel.state).to.equal('paused');
    const again = await t.request('POST', '/ops/kernels/analytics/pause', { token: operator });
    expect(again.status).to.equal(409);
    expect(again.body.detail).to.match(/No node of kernel analytics can pause/);
    const drained = await t.request('POST', '/ops/kernels/analytics/drain', { token: operator, body: { deadline_seconds: 30 } });
    expect(drained.status).to.equal(202);
    expect(drained.body.kernel.state).to.equal('draining');
    for (const id of ['analytics-1', 'analytics-2']) expect((await t.request('POST', `/mesh/nodes/${id}/drain/complete`, { token: operator })).status).to.equal(200);
    expect((await t.request('GET', '/ops/kernels/analytics', { token: viewer })).body.state).to.equal('drained');
    const resumed = await t.request('POST', '/ops/kernels/analytics/resume', { token: operator });
    expect(resumed.body.kernel.state).to.equal('active');
    expect((await t.request('POST', '/kernels/analytics/tasks/describe', { body: { values: [5] } })).status).to.equal(200);
    expect((await t.request('POST', '/ops/kernels/nope/pause', { token: operator })).status).to.equal(404);
    expect((await t.request('GET', '/ops/kernels/nope', { token: viewer })).status).to.equal(404);
    expect((await t.request('POST', '/ops/kernels/Bad_Id/drain', { token: operator, body: {} })).status).to.equal(422);
    const recorded = await t.host.services.actions.list({ limit: 5, target_type: 'kernel', target_id: 'analytics' });
    expect(recorded.actions[0]).to.include({ action: 'resume_kernel', result: 'succeeded', source: 'manual' });
  });

  it('services.mesh.run: the caller AbortSignal aborts the running task; validateInput lists issues', async () => {
    const mesh = t.host.services.mesh;
    const ac = new AbortController();
    const running = mesh.run('probe', 'wait', { ms: 10_000 }, { signal: ac.signal });
    await eventually(() => mesh.nodeOf('probe-1').node.inFlight === 1, 2000, 'task in flight');
    const t0 = Date.now();
    ac.abort();
    const err = (await running.catch((e: unknown) => e)) as { status: number; detail: string };
    expect(err.status).to.equal(503);
    expect(err.detail).to.equal('the task was cancelled');
    expect(Date.now() - t0).to.be.below(2000);
    expect(mesh.nodeOf('probe-1').node.inFlight).to.equal(0);
    expect(mesh.validateInput('probe', 'wait', { ms: 'x' })).to.deep.equal([{ loc: ['body', 'ms'], msg: 'Input should be a valid integer, unable to parse string as an integer', type: 'int_parsing' }]);
    expect(mesh.validateInput('probe', 'wait', { ms: 5 })).to.deep.equal([]);
    const timedOut = (await mesh.run('probe', 'wait', { ms: 5000 }, { timeoutMs: 100 }).catch((e: unknown) => e)) as { status: number; detail: string };
    expect(timedOut.status).to.equal(503);
    expect(timedOut.detail).to.match(/did not finish within 100 ms/);
    expect((await mesh.run('probe', 'wait', { ms: 1 }))).to.have.property('thread_id');
  });

  it('streams node and kernel state events and drain progress on pause and drain', async () => {
    const s = await openStream(t, operator);
    try {
      const snap = await s.next((m) => m.type === 'snapshot');
      expect(snap.data.kernels.map((k: any) => k.id)).to.deep.equal(['analytics', 'probe']);
      expect(snap.data.overview.registry.total_nodes).to.equal(3);
      await t.request('POST', '/mesh/nodes/probe-1/pause', { token: operator });
      const paused = await s.next((m) => m.type === 'node_state' && m.data.state === 'paused');
      expect(paused.data).to.deep.equal({ node_id: 'probe-1', kernel_id: 'probe', state: 'paused', previous: 'active' });
      await s.next((m) => m.type === 'kernel_state' && m.data.kernel_id === 'probe' && m.data.state === 'paused');
      await s.next((m) => m.type === 'action_taken' && m.data.action === 'pause_node');
      await t.request('POST', '/mesh/nodes/probe-1/drain', { token: operator, body: {} });
      await s.next((m) => m.type === 'node_state' && m.data.state === 'draining' && m.data.previous === 'paused');
      const progress = await s.next((m) => m.type === 'drain_progress');
      expect(progress.data).to.include({ node_id: 'probe-1', in_flight: 0, progress: 1 });
      await t.request('POST', '/mesh/nodes/probe-1/drain/abort', { token: operator });
      await s.next((m) => m.type === 'node_state' && m.data.state === 'active');
      expect(Date.parse(progress.timestamp)).to.be.closeTo(Date.now(), 5000);
    } finally {
      await s.close();
    }
  });
});

describe('mesh: kernel discovery', () => {
  it('refuses to start with a clear message when a kernel folder is missing', async () => {
    let message = '';
    await startMeshHost(['probe'], { kernelDirs: ['/nonexistent/kernels'] }).catch((e: Error) => (message = e.message));
    expect(message).to.equal('kernel mesh: kernel folder /nonexistent/kernels does not exist');
  });
});
