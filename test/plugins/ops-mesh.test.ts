import { expect } from 'chai';
import type { TestHost } from '../helpers/host';
import { startMeshHost } from '../core/mesh-helpers';
import { eventually } from '../helpers/eventually';

describe('ops-mesh plugin (/ops mesh endpoints)', () => {
  let t: TestHost;
  let viewer: string;
  before(async () => {
    t = await startMeshHost(['analytics', 'trading'], { nodesPerKernel: 2 });
    viewer = (await t.userToken('viewer')).token;
    await eventually(() => t.host.services.mesh.globalHealth.health === 'healthy' && t.host.services.mesh.nodes().every((n) => n.health === 'healthy'), 5000, 'healthy mesh');
  });
  after(() => t.stop());

  it('GET /ops/mesh/overview answers the spec fields from live state', async () => {
    const r = await t.request('GET', '/ops/mesh/overview', { token: viewer });
    expect(r.status).to.equal(200);
    expect(r.body.registry).to.deep.include({ total_nodes: 4, by_domain: { analytics: 2, trading: 2 }, by_health: { healthy: 4 } });
    expect(r.body.health).to.include({ global_state: 'healthy', kernel_count: 2 });
    expect(r.body.circuit_breaker).to.deep.equal({ kernel_states: { analytics: 'closed', trading: 'closed' }, isolated_kernels: [] });
    await t.host.services.mesh.isolateKernel('trading', { source: 'manual', actor: 'test' });
    const iso = await t.request('GET', '/ops/mesh/overview', { token: viewer });
    expect(iso.body.circuit_breaker.isolated_kernels).to.deep.equal(['trading']);
    await t.host.services.mesh.restoreKernel('trading', { source: 'manual', actor: 'test' });
    expect((await t.request('GET', '/ops/mesh/overview', { token: null })).status).to.equal(401);
  });

  it('GET /ops/kernels and /ops/kernels/{id}', async () => {
    const r = await t.request('GET', '/ops/kernels', { token: viewer });
    expect(r.body.kernels.map((k: any) => k.id)).to.deep.equal(['analytics', 'trading']);
    const one = await t.request('GET', '/ops/kernels/trading', { token: viewer });
    expect(one.body.nodes_by_state).to.deep.equal({ active: 2, paused: 0, draining: 0, drained: 0 });
    expect((await t.request('GET', '/ops/kernels/zzz', { token: viewer })).status).to.equal(404);
  });

  it('GET /ops/stats counts real tasks with run and wait percentiles', async () => {
    for (let i = 0; i < 3; i++) await t.request('POST', '/kernels/trading/tasks/price_option', { body: { type: 'put', spot: 90, strike: 100, rate: 0.01, volatility: 0.3, time_years: 0.5 } });
    await t.request('POST', '/kernels/trading/tasks/price_option', { body: { type: 'put' } });
    const r = await t.request('GET', '/ops/stats', { token: viewer });
    expect(r.status).to.equal(200);
    const trading = r.body.mesh.kernels.find((k: any) => k.kernel_id === 'trading');
    expect(trading).to.include({ tasks_run: 3, tasks_failed: 0, in_flight: 0, queued: 0 });
    expect(trading.run_time_ms.count).to.equal(3);
    expect(trading.nodes.reduce((a: number, n: any) => a + n.tasks_run, 0)).to.equal(3);
    expect(r.body.mesh.totals.tasks_run).to.equal(3);
    expect(r.body.stream).to.include({ clients: 0 });
    expect((await t.request('GET', '/ops/stats', { token: null })).status).to.equal(401);
  });

  it('POST /ops/kernels/{id}/drain answers 202 with the nodes it drains; refuses a bad body', async () => {
    const operator = (await t.userToken('operator')).token;
    expect((await t.request('POST', '/ops/kernels/trading/drain', { token: operator, body: { deadline_seconds: -5 } })).status).to.equal(422);
    const r = await t.request('POST', '/ops/kernels/trading/drain', { token: operator, body: { deadline_seconds: 1, force: true } });
    expect(r.status).to.equal(202);
    expect(r.body.changed).to.deep.equal(['trading-1', 'trading-2']);
    // Nothing in flight: at the deadline the mesh completes the drain itself.
    await eventually(() => t.host.services.mesh.kernel('trading').state === 'drained', 4000, 'drained at the deadline');
    const auto = await eventually(async () => {
      const l = await t.host.services.actions.list({ limit: 5, source: 'automated', action: 'complete_drain' });
      return l.actions.length === 2 ? l : null;
    }, 3000, 'two automated actions');
    expect(auto.actions.map((a) => a.target_id).sort()).to.deep.equal(['trading-1', 'trading-2']);
    expect((await t.request('POST', '/ops/kernels/trading/drain', { token: operator, body: {} })).status).to.equal(409);
    expect((await t.request('POST', '/ops/kernels/trading/resume', { token: operator })).status).to.equal(200);
  });
});
