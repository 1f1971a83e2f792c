import crypto from 'node:crypto';
import { expect } from 'chai';
import auth from '../../../plugins/auth';
import chaos from '../../../plugins/chaos';
import health from '../../../plugins/health';
import kernels from '../../../plugins/kernels';
import stability from '../../../plugins/stability';
import { startHost, type TestHost } from '../../helpers/host';
import { eventually } from '../../helpers/eventually';

describe('stability: stress tests, benchmarks, reliability envelope', () => {
  let t: TestHost;
  let op: string;
  let viewer: string;
  let otherOp: string;
  before(async () => {
    t = await startHost({ plugins: [auth, kernels, health, chaos, stability] });
    op = (await t.userToken('operator')).token;
    viewer = (await t.userToken('viewer')).token;
    otherOp = (await t.userToken('operator', 'acme')).token;
  });
  after(() => t.stop());

  const finished = (id: string, token = op) =>
    eventually(async () => {
      const r = await t.request('GET', `/stability/stress_test/${id}`, { token });
      return ['succeeded', 'failed', 'cancelled'].includes(r.body.state) ? r : null;
    }, 20_000);

  let kernelTest = '';
  describe('POST /stability/stress_test and GET /stability/stress_test/{test_id}', () => {
    it('drives bounded load at a kernel task and reports throughput, latency, errors and the mesh during it', async () => {
      const r = await t.request('POST', '/stability/stress_test', { token: op, body: { target: { kind: 'kernel_task', domain: 'analytics', task: 'describe', input: { values: [1, 2, 3, 4] } }, rate_per_second: 20, duration_seconds: 1, concurrency: 4 } });
      expect(r.status).to.equal(202);
      expect(r.body).to.include({ state: 'queued', kind: 'stress_test', tenant_id: 'platform' });
      kernelTest = r.body.id;
      const done = await finished(r.body.id);
      expect(done.body.state).to.equal('succeeded');
      const res = done.body.result;
      expect(res.load.sent + res.load.dropped).to.equal(20);
      expect(res.load.ok).to.equal(res.load.sent - Object.values(res.load.errors as Record<string, number>).reduce((a, b) => a + b, 0));
      expect(res.load.ok).to.be.greaterThan(0);
      expect(res.load.latency_ms.p95).to.be.at.least(res.load.latency_ms.p50);
      expect(res.mesh.kernels).to.deep.equal(['analytics']);
      expect(res.mesh.samples).to.be.at.least(2);
      expect(res.mesh.node_health.map((n: { node_id: string }) => n.node_id)).to.deep.equal(['analytics-1']);
      expect(res.slo).to.have.keys(['latency_p95_ms', 'error_rate', 'met']);
      // the tasks really ran on the mesh, as the caller's tenant
      await eventually(async () => {
        const [{ n }] = await t.host.services.db('task_outcomes').where({ kernel_id: 'analytics', tenant_id: 'platform' }).count({ n: '*' });
        return Number(n) >= res.load.ok;
      });
    });

    it('drives load at a GET route', async () => {
      const r = await t.request('POST', '/stability/stress_test', { token: op, body: { name: 'health probe', target: { kind: 'route', path: '/health/' }, rate_per_second: 10, duration_seconds: 1, concurrency: 2 } });
      expect(r.status).to.equal(202);
      const done = await finished(r.body.id);
      expect(done.body.state).to.equal('succeeded');
      expect(done.body.result.load.ok).to.equal(done.body.result.load.sent);
      expect(done.body.result.slo).to.equal(null);
    });

    it('refuses to run while a chaos experiment runs (409 CHAOS_ACTIVE)', async () => {
      const s = await t.request('POST', '/ops/resilience/scenarios', { token: op, body: { name: 'slow analytics', injection_type: 'latency', target_domains: ['analytics'], parameters: { latency_ms: 5 }, duration_seconds: 60 } });
      expect(s.status).to.equal(201);
      const e = await t.request('POST', `/ops/resilience/scenarios/${s.body.scenario_id}/run`, { token: op });
      expect(e.status).to.be.oneOf([201, 202]);
      const id = e.body.experiment_id ?? e.body.id;
      try {
        const r = await t.request('POST', '/stability/stress_test', { token: op, body: { scenario_id: 'api-health-steady' } });
        expect(r.status).to.equal(409);
        expect(r.body.code).to.equal('CHAOS_ACTIVE');
      } finally {
        expect((await t.request('POST', `/ops/resilience/experiments/${id}/abort`, { token: op })).status).to.equal(200);
      }
    });

    it('answers 401, 403 below operator, 404 for an unknown scenario or test and for another tenant, 422 for bad bounds and targets', async () => {
      const body = { target: { kind: 'route', path: '/health/' }, rate_per_second: 5, duration_seconds: 1, concurrency: 1 };
      expect((await t.request('POST', '/stability/stress_test', { token: null, body })).status).to.equal(401);
      expect((await t.request('POST', '/stability/stress_test', { token: viewer, body })).status).to.equal(403);
      expect((await t.request('POST', '/stability/stress_test', { token: op, body: { scenario_id: 'nope' } })).status).to.equal(404);
      for (const bad of [{ ...body, rate_per_second: 1000 }, { ...body, duration_seconds: 3600 }, { ...body, concurrency: 0 }, { ...body, target: { kind: 'route', path: 'http://example.com/' } }, { ...body, target: { kind: 'route', path: '/a/../b' } }, { ...body, target: { kind: 'kernel_task', domain: 'nosuch', task: 'x' } }, { ...body, target: { kind: 'kernel_task', domain: 'analytics', task: 'describe', input: { values: 'x' } } }]) {
        expect((await t.request('POST', '/stability/stress_test', { token: op, body: bad })).status, JSON.stringify(bad)).to.equal(422);
      }
      expect((await t.request('GET', `/stability/stress_test/${crypto.randomUUID()}`, { token: viewer })).status).to.equal(404);
      expect((await t.request('GET', `/stability/stress_test/${kernelTest}`, { token: otherOp })).status).to.equal(404);
      expect((await t.request('GET', '/stability/stress_test/not-a-uuid', { token: viewer })).status).to.equal(422);
      expect((await t.request('GET', `/stability/stress_test/${kernelTest}`, { token: null })).status).to.equal(401);
    });
  });

  describe('GET /stability/stress_test/scenarios', () => {
    it('lists the stored scenarios', async () => {
      const r = await t.request('GET', '/stability/stress_test/scenarios', { token: viewer });
      expect(r.status).to.equal(200);
      expect(r.body.scenarios.map((s: { id: string }) => s.id)).to.deep.equal(['analytics-describe-spike', 'analytics-describe-steady', 'api-health-steady']);
      expect((await t.request('GET', '/stability/stress_test/scenarios', { token: null })).status).to.equal(401);
    });
  });

  describe('reliability envelope and check', () => {
    it('measures the envelope of a stress-tested kernel only, and checks current load against it', async () => {
      const r = await t.request('GET', '/stability/reliability/envelope', { token: viewer });
      expect(r.status).to.equal(200);
      const analytics = r.body.kernels.find((k: { kernel_id: string }) => k.kernel_id === 'analytics');
      expect(analytics.status).to.equal('measured');
      expect(analytics.tests).to.have.length(1);
      expect(analytics.tests[0].test_id).to.equal(kernelTest);
      const bound = analytics.max_throughput_within_slo_per_s ?? analytics.min_throughput_breaking_slo_per_s;
      expect(bound).to.be.a('number');
      expect(r.body.kernels.find((k: { kernel_id: string }) => k.kernel_id === 'trading')).to.include({ status: 'unmeasured', max_throughput_within_slo_per_s: null });
      // another tenant sees the platform's envelope but not this tenant's test ids
      const other = await t.request('GET', '/stability/reliability/envelope', { token: otherOp });
      expect(other.body.kernels.find((k: { kernel_id: string }) => k.kernel_id === 'analytics').tests[0].test_id).to.equal(null);
      const c = await t.request('POST', '/stability/reliability/check', { token: viewer, body: { window_seconds: 3600 } });
      expect(c.status).to.equal(200);
      const ca = c.body.kernels.find((k: { kernel_id: string }) => k.kernel_id === 'analytics');
      expect(ca.tasks).to.be.at.least(1);
      expect(ca.rate_per_s).to.equal(Math.round((ca.tasks / 3600) * 1000) / 1000);
      const limit = analytics.max_throughput_within_slo_per_s;
      const broke = analytics.min_throughput_breaking_slo_per_s;
      const rate = ca.tasks / 3600;
      const expected = limit !== null ? (rate > limit ? 'over' : rate > 0.8 * limit ? 'near' : 'within') : broke !== null && rate >= broke ? 'over' : 'unknown';
      expect(ca.status).to.equal(expected);
      expect(ca.envelope_per_s).to.equal(limit);
      expect(c.body.kernels.find((k: { kernel_id: string }) => k.kernel_id === 'trading').status).to.equal('unknown');
    });

    it('answers 401 and 422', async () => {
      expect((await t.request('GET', '/stability/reliability/envelope', { token: null })).status).to.equal(401);
      expect((await t.request('POST', '/stability/reliability/check', { token: null, body: {} })).status).to.equal(401);
      expect((await t.request('POST', '/stability/reliability/check', { token: viewer, body: { window_seconds: 1 } })).status).to.equal(422);
    });
  });

  describe('benchmarks', () => {
    it('runs the fixed suite, stores the results, and judges trends only with enough history', async () => {
      const r = await t.request('POST', '/stability/benchmarks/run', { token: op, body: {} });
      expect(r.status).to.equal(202);
      const done = await eventually(async () => {
        const x = await t.request('GET', '/stability/benchmarks/results?state=succeeded', { token: viewer });
        return x.body.runs.find((y: { id: string }) => y.id === r.body.id) ?? null;
      }, 30_000);
      const names = Object.fromEntries(done.result.benchmarks.map((b: { name: string; status: string }) => [b.name, b]));
      expect(names['kernel.analytics.describe_1k']).to.include({ status: 'measured', iterations: 40 });
      expect(names['kernel.analytics.describe_1k'].p95_ms).to.be.at.least(names['kernel.analytics.describe_1k'].p50_ms);
      expect(names['api.get_health']).to.include({ status: 'measured', iterations: 60 });
      const tr = await t.request('GET', '/stability/benchmarks/trends', { token: viewer });
      expect(tr.status).to.equal(200);
      expect(tr.body.benchmarks.find((b: { name: string }) => b.name === 'api.get_health')).to.include({ regression: null, baseline: null });
    });

    it('flags a regression when the latest run is far slower than the baseline', async () => {
      // Stored history of earlier runs (the trend reads only what is stored).
      const at = (i: number) => new Date(Date.now() - (10 - i) * 60_000).toISOString();
      const bench = (p50: number) => ({ benchmarks: [{ name: 'synthetic.history', kind: 'api', status: 'measured', reason: null, iterations: 10, mean_ms: p50, p50_ms: p50, p95_ms: p50, ops_per_s: 1000 / p50 }] });
      for (const [i, p50] of [10, 10.4, 9.8, 10.1, 25].entries()) {
        await t.host.services.db('stability_runs').insert({ id: crypto.randomUUID(), kind: 'benchmark', tenant_id: null, state: 'succeeded', definition: '{}', result: JSON.stringify(bench(p50)), error: null, created_by: 'test', created_at: at(i), started_at: at(i), finished_at: at(i) });
      }
      const tr = await t.request('GET', '/stability/benchmarks/trends', { token: viewer });
      const s = tr.body.benchmarks.find((b: { name: string }) => b.name === 'synthetic.history');
      expect(s.regression).to.equal(true);
      expect(s.baseline.runs).to.equal(4);
      expect(s.points.map((p: { p50_ms: number }) => p.p50_ms)).to.deep.equal([10, 10.4, 9.8, 10.1, 25]);
    });

    it('answers 401, 403 and 422', async () => {
      expect((await t.request('POST', '/stability/benchmarks/run', { token: viewer, body: {} })).status).to.equal(403);
      expect((await t.request('POST', '/stability/benchmarks/run', { token: null, body: {} })).status).to.equal(401);
      expect((await t.request('POST', '/stability/benchmarks/run', { token: op, body: { suite: 'x' } })).status).to.equal(422);
      expect((await t.request('GET', '/stability/benchmarks/results', { token: null })).status).to.equal(401);
      expect((await t.request('GET', '/stability/benchmarks/results?state=nope', { token: viewer })).status).to.equal(422);
      expect((await t.request('GET', '/stability/benchmarks/trends', { token: null })).status).to.equal(401);
      expect((await t.request('GET', '/stability/benchmarks/trends?runs=1', { token: viewer })).status).to.equal(422);
    });
  });
});
