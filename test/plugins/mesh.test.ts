import { expect } from 'chai';
import type { TestHost } from '../helpers/host';
import { startMeshHost } from '../core/mesh-helpers';
import { eventually } from '../helpers/eventually';

describe('mesh plugin (/mesh health and stats) and node management', () => {
  let t: TestHost;
  let viewer: string;
  before(async () => {
    t = await startMeshHost(['analytics']);
    viewer = (await t.userToken('viewer')).token;
    await eventually(() => t.host.services.mesh.globalHealth.health === 'healthy', 5000, 'healthy mesh');
  });
  after(() => t.stop());

  it('GET /mesh/health derives the global state from kernels and nodes', async () => {
    const r = await t.request('GET', '/mesh/health', { token: viewer });
    expect(r.status).to.equal(200);
    expect(r.body.status).to.equal('healthy');
    expect(r.body.kernels).to.deep.equal([{ kernel_id: 'analytics', health: 'healthy', reason: '1 of 1 healthy', breaker: 'closed' }]);
    expect(r.body.nodes[0]).to.include({ node_id: 'analytics-1', state: 'active', health: 'healthy' });
    expect((await t.request('GET', '/mesh/health', { token: null })).status).to.equal(401);
  });

  it('GET /mesh/stats counts tasks, failures and timings per kernel and node', async () => {
    await t.request('POST', '/kernels/analytics/tasks/describe', { body: { values: [1, 2] } });
    await t.request('POST', '/kernels/analytics/tasks/regression', { body: { x: [1, 1], y: [2, 3] } });
    const r = await t.request('GET', '/mesh/stats', { token: viewer });
    expect(r.status).to.equal(200);
    const k = r.body.kernels[0];
    // A 422 from a handler is the caller's error: it counts as run, not failed.
    expect(k).to.include({ kernel_id: 'analytics', tasks_run: 2, tasks_failed: 0 });
    expect(k.nodes[0]).to.include({ node_id: 'analytics-1', host: null, tasks_run: 2, state: 'active' });
    // A single host is no cluster: no host list.
    expect(r.body.hosts).to.deep.equal([]);
    expect(k.nodes[0].run_time_ms.p99).to.be.at.least(k.nodes[0].run_time_ms.p50);
  });

  it('adds nodes with continuing numbers, resizes threads, removes only drained nodes', async () => {
    const mesh = t.host.services.mesh;
    const who = { source: 'manual' as const, actor: 'test' };
    const added = await mesh.addNode('analytics', who, 2);
    expect(added).to.include({ id: 'analytics-2', threads: 2 });
    await eventually(() => mesh.node('analytics-2').live_threads.length === 2, 3000, 'two threads');
    const resized = await mesh.setThreads('analytics-2', 1, who);
    expect(resized.threads).to.equal(1);
    let refused = 0;
    await mesh.removeNode('analytics-2', who).catch((e: { status: number }) => (refused = e.status));
    expect(refused).to.equal(409);
    await mesh.drainNode('analytics-2', {}, who);
    await mesh.completeDrain('analytics-2', {}, who);
    await mesh.removeNode('analytics-2', who);
    expect(mesh.nodes().map((n) => n.id)).to.deep.equal(['analytics-1']);
    expect((await mesh.addNode('analytics', who)).id).to.equal('analytics-3');
    expect((await t.request('POST', '/kernels/analytics/tasks/describe', { body: { values: [3] } })).status).to.equal(200);
  });

  it('POST /mesh/nodes, PUT .../threads and DELETE /mesh/nodes/{id} over HTTP (operator)', async () => {
    const operator = (await t.userToken('operator')).token;
    expect((await t.request('POST', '/mesh/nodes', { token: viewer, body: { kernel_id: 'analytics' } })).status).to.equal(403);
    expect((await t.request('POST', '/mesh/nodes', { token: operator, body: { kernel_id: 'nope' } })).status).to.equal(404);
    expect((await t.request('POST', '/mesh/nodes', { token: operator, body: { kernel_id: 'analytics', threads: 0 } })).status).to.equal(422);
    // A single host has no other host to put a node on.
    const elsewhere = await t.request('POST', '/mesh/nodes', { token: operator, body: { kernel_id: 'analytics', host: 'b' } });
    expect(elsewhere.status).to.equal(404);
    expect(elsewhere.body.detail).to.match(/Unknown host "b"/);
    const added = await t.request('POST', '/mesh/nodes', { token: operator, body: { kernel_id: 'analytics', threads: 1 } });
    expect(added.status).to.equal(201);
    const id = added.body.id as string;
    expect(id).to.equal('analytics-4');
    const resized = await t.request('PUT', `/mesh/nodes/${id}/threads`, { token: operator, body: { threads: 2 } });
    expect(resized.status).to.equal(200);
    expect(resized.body.threads).to.equal(2);
    expect((await t.request('DELETE', `/mesh/nodes/${id}`, { token: operator })).status).to.equal(409);
    await t.request('POST', `/mesh/nodes/${id}/drain`, { token: operator, body: {} });
    await t.request('POST', `/mesh/nodes/${id}/drain/complete`, { token: operator });
    expect((await t.request('DELETE', `/mesh/nodes/${id}`, { token: operator })).status).to.equal(204);
    expect((await t.request('GET', `/mesh/nodes/${id}`, { token: viewer })).status).to.equal(404);
    expect((await t.request('DELETE', `/mesh/nodes/${id}`, { token: operator })).status).to.equal(404);
  });

  it('POST /ops/kernels/{id}/isolate and /restore open and close the breaker by hand', async () => {
    const operator = (await t.userToken('operator')).token;
    const iso = await t.request('POST', '/ops/kernels/analytics/isolate', { token: operator });
    expect(iso.status).to.equal(200);
    expect(iso.body.breaker).to.deep.equal({ state: 'open', isolated: true });
    expect((await t.request('POST', '/ops/kernels/analytics/isolate', { token: operator })).status).to.equal(409);
    const r = await t.request('POST', '/kernels/analytics/tasks/describe', { body: { values: [1] } });
    expect(r.status).to.equal(503);
    expect((await t.request('POST', '/ops/kernels/analytics/restore', { token: viewer })).status).to.equal(403);
    const back = await t.request('POST', '/ops/kernels/analytics/restore', { token: operator });
    expect(back.body.breaker).to.deep.equal({ state: 'closed', isolated: false });
    expect((await t.request('POST', '/ops/kernels/analytics/restore', { token: operator })).status).to.equal(409);
    expect((await t.request('POST', '/ops/kernels/nope/isolate', { token: operator })).status).to.equal(404);
  });
});

describe('mesh plugin: node management stays within its bounds', () => {
  let t: TestHost;
  before(async () => {
    t = await startMeshHost(['analytics'], { maxNodesPerKernel: 3, maxThreads: 4 });
  });
  after(() => t.stop());

  it('refuses (409) nodes past mesh.maxNodesPerKernel and threads past mesh.maxThreads', async () => {
    const operator = (await t.userToken('operator')).token;
    // One node of one thread to start with: three threads left.
    expect(t.host.services.mesh.nodes()).to.have.length(1);
    const big = await t.request('POST', '/mesh/nodes', { token: operator, body: { kernel_id: 'analytics', threads: 4 } });
    expect(big.status).to.equal(409);
    expect(big.body.detail).to.match(/mesh.maxThreads \(3 left\)/);
    const second = await t.request('POST', '/mesh/nodes', { token: operator, body: { kernel_id: 'analytics', threads: 2 } });
    expect(second.status).to.equal(201);
    expect((await t.request('PUT', `/mesh/nodes/${second.body.id}/threads`, { token: operator, body: { threads: 4 } })).status).to.equal(409);
    expect((await t.request('PUT', `/mesh/nodes/${second.body.id}/threads`, { token: operator, body: { threads: 3 } })).status).to.equal(200);
    const third = await t.request('POST', '/mesh/nodes', { token: operator, body: { kernel_id: 'analytics', threads: 1 } });
    expect(third.status).to.equal(409);
    expect(third.body.detail).to.match(/mesh.maxThreads/);
    await t.request('PUT', `/mesh/nodes/${second.body.id}/threads`, { token: operator, body: { threads: 1 } });
    expect((await t.request('POST', '/mesh/nodes', { token: operator, body: { kernel_id: 'analytics', threads: 1 } })).status).to.equal(201);
    const fourth = await t.request('POST', '/mesh/nodes', { token: operator, body: { kernel_id: 'analytics', threads: 1 } });
    expect(fourth.status).to.equal(409);
    expect(fourth.body.detail).to.match(/mesh.maxNodesPerKernel/);
    const refused = await t.host.services.actions.list({ limit: 10, action: 'add_node', source: 'manual' });
    expect(refused.actions.filter((a) => a.result === 'refused')).to.have.length(3);
  });
});
