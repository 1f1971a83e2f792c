import { expect } from 'chai';
import slo from '../../plugins/slo';
import { BUILTIN_KERNELS, FIXTURE_KERNELS } from '../core/mesh-helpers';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

eachDatabase('slo plugin', (db) => {
  let t: TestHost;
  let viewer: string;
  before(async () => {
    t = await startHost({
      db,
      plugins: [slo],
      config: {
        mesh: { kernelDirs: [BUILTIN_KERNELS, FIXTURE_KERNELS], only: ['analytics', 'probe'], heartbeatMs: 100 },
        slo: { domains: { probe: { availability: 0.9, latencyP99Ms: 5000, windowSeconds: 60 }, analytics: { availability: 0.99, latencyP99Ms: 90, windowSeconds: 60 } } },
      },
    });
    viewer = (await t.userToken('viewer')).token;
  });
  after(() => t.stop());

  it('reports no data before any task ran', async () => {
    const r = await t.request('GET', '/ops/slo/probe', { token: viewer });
    expect(r.status).to.equal(200);
    expect(r.body).to.deep.include({ domain: 'probe', tasks: 0, success_ratio: null, latency_ms: null, burn_rate: 0, met: null, status: 'no_data' });
    expect(r.body.error_budget).to.deep.equal({ allowed_failures: 0, failures: 0, remaining: 1 });
    expect(r.body.objective).to.deep.equal({ availability: 0.9, latency_p99_ms: 5000, window_seconds: 60 });
  });

  it('computes success ratio, budget and burn rate from real task outcomes in the window', async () => {
    const mesh = t.host.services.mesh;
    for (let i = 0; i < 10; i++) await mesh.run('probe', 'wait', { ms: 1 });
    mesh.setControl('probe-1', { error_rate: 1 });
    for (let i = 0; i < 2; i++) await mesh.run('probe', 'wait', { ms: 1 }).catch(() => undefined);
    mesh.setControl('probe-1', null);
    // An outcome older than the window does not count.
    await t.host.services.db('task_outcomes').insert({ kernel_id: 'probe', node_id: 'probe-1', task: 'wait', ok: false, duration_ms: 1, wait_ms: 0, error: 'old', tenant_id: null, at: new Date(Date.now() - 120_000).toISOString() });
    const r = await t.request('GET', '/ops/slo/probe', { token: viewer });
    expect(r.body).to.include({ tasks: 12, succeeded: 10, failed: 2, success_ratio: 0.833333, burn_rate: 1.666667, availability_met: false, latency_met: true, met: false, status: 'breached' });
    expect(r.body.error_budget).to.deep.equal({ allowed_failures: 1.2, failures: 2, remaining: -0.666667 });
    const l = r.body.latency_ms;
    expect(l.p50).to.be.at.most(l.p95);
    expect(l.p95).to.be.at.most(l.p99);
    expect(l.p50).to.be.above(0);
  });

  it('checks the p99 latency against its target (nearest-rank percentiles)', async () => {
    const now = Date.now();
    const rows = Array.from({ length: 100 }, (_, i) => ({ kernel_id: 'analytics', node_id: 'analytics-1', task: 'describe', ok: true, duration_ms: i + 1, wait_ms: 0, error: null, tenant_id: null, at: new Date(now - 1000).toISOString() }));
    await t.host.services.db('task_outcomes').insert(rows);
    const r = await t.request('GET', '/ops/slo/analytics', { token: viewer });
    expect(r.body.latency_ms).to.deep.equal({ p50: 50, p95: 95, p99: 99 });
    expect(r.body).to.include({ success_ratio: 1, burn_rate: 0, availability_met: true, latency_met: false, met: false, status: 'breached' });
    expect(r.body.error_budget.remaining).to.equal(1);
  });

  it('GET /ops/slo lists every domain with the overall status', async () => {
    const r = await t.request('GET', '/ops/slo', { token: viewer });
    expect(r.status).to.equal(200);
    expect(r.body.domains.map((d: { domain: string }) => d.domain)).to.deep.equal(['analytics', 'probe']);
    expect(r.body).to.include({ met: false, domains_met: 0, domains_breached: 2, domains_without_data: 0 });
  });

  it('404 unknown domain, 422 bad name, 401 without a token', async () => {
    expect((await t.request('GET', '/ops/slo/trading', { token: viewer })).status).to.equal(404);
    expect((await t.request('GET', '/ops/slo/Bad!', { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', '/ops/slo', { token: null })).status).to.equal(401);
    expect((await t.request('GET', '/ops/slo/probe', { token: null })).status).to.equal(401);
  });
});
