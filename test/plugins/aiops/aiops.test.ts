import { expect } from 'chai';
import type { BusEvent } from '../../../core/events';
import { eventually } from '../../helpers/eventually';
import { eachDatabase } from '../../helpers/host';
import { MISSING, settled, startGroup, type Group } from '../uaicp/setup';

const INGEST = '/observability/v1/ingest';

eachDatabase('aiops plugin', (db) => {
  let g: Group;
  const events: BusEvent[] = [];
  before(async () => {
    g = await startGroup({}, db);
    g.t.host.services.events.subscribe('*', (e) => events.push(e));
  });
  after(() => g.t.stop());
  const req = (method: string, path: string, token: string | null, body?: unknown) => g.t.request(method, path, { token, body });
  const ingest = (type: string, evs: unknown[], token = g.member) => req('POST', `${INGEST}/${type}`, token, { events: evs });
  const register = (body: Record<string, unknown>, token = g.member) =>
    req('POST', '/aiops/models', token, { provider: 'openai', task: 'chat', price: { input_per_million: 1, output_per_million: 2 }, ...body });

  describe('models, metrics and routing', () => {
    let fast: any;
    let cheap: any;
    before(async () => {
      fast = (await register({ name: 'fast-model', version: '2024-01', price: { input_per_million: '10', output_per_million: '30' } })).body;
      cheap = (await register({ name: 'cheap-model', price: { input_per_million: 0.1, output_per_million: 0.3 } })).body;
      const calls = (model: string, ms: number, cost: number) => Array.from({ length: 5 }, () => ({ provider: 'openai', request_model: model, duration_ms: ms, input_tokens: 100, output_tokens: 50, cost_usd: cost }));
      expect((await ingest('llm-call', [...calls('fast-model', 100, 0.01), ...calls('cheap-model', 900, 0.0001)])).status).to.equal(202);
      expect((await ingest('evaluation', [{ metric: 'faithfulness', score: 0.9, model: 'fast-model' }, { metric: 'faithfulness', score: 0.7, model: 'cheap-model' }])).status).to.equal(202);
    });

    it('registers models with versions and prices as decimal strings', async () => {
      expect(fast).to.include({ name: 'fast-model', version: '2024-01', provider: 'openai', task: 'chat' });
      expect(fast.price).to.deep.equal({ input_per_million: '10.000000', output_per_million: '30.000000', currency: 'USD' });
      expect(cheap.version).to.equal('1');
      const again = await register({ name: 'cheap-model' });
      expect(again.body.version).to.equal('2');
      const dup = await register({ name: 'fast-model', version: '2024-01' });
      expect(dup.status).to.equal(409);
      expect(dup.body.code).to.equal('MODEL_VERSION_EXISTS');
      expect((await register({ name: 'x', price: { input_per_million: '0.0000001', output_per_million: 1 } })).body.detail[0].loc).to.deep.equal(['body', 'price', 'input_per_million']);
      expect((await register({ name: '' })).status).to.equal(422);
      expect((await register({ name: 'y' }, g.viewer)).status).to.equal(403);
      expect((await register({ name: 'y' }, null as never)).status).to.equal(401);
    });

    it('lists, reads and reprices models within the tenant', async () => {
      const list = await req('GET', '/aiops/models?task=chat&limit=2', g.viewer);
      expect(list.status).to.equal(200);
      expect(list.body.models).to.have.length(2);
      expect(list.body.next_cursor).to.be.a('string');
      const rest = await req('GET', `/aiops/models?task=chat&limit=2&cursor=${list.body.next_cursor}`, g.viewer);
      expect(rest.body.models.map((m: any) => m.id)).to.not.include.members(list.body.models.map((m: any) => m.id));
      expect((await req('GET', '/aiops/models?limit=0', g.viewer)).status).to.equal(422);
      expect((await req('GET', `/aiops/models/${fast.id}`, g.viewer)).body.id).to.equal(fast.id);
      expect((await req('GET', `/aiops/models/${fast.id}`, g.acme)).status).to.equal(404);
      expect((await req('GET', '/aiops/models/not-a-uuid', g.viewer)).status).to.equal(422);
      expect((await req('GET', '/aiops/models', null)).status).to.equal(401);
      expect((await req('GET', '/aiops/models', g.acme)).body.models).to.deep.equal([]);
      const repriced = await req('PUT', `/aiops/models/${cheap.id}/price`, g.operator, { input_per_million: '0.2', output_per_million: '0.4' });
      expect(repriced.body.price.input_per_million).to.equal('0.200000');
      expect((await req('PUT', `/aiops/models/${cheap.id}/price`, g.member, { input_per_million: 1, output_per_million: 1 })).status).to.equal(403);
    });

    it('measures a model from llm-call and evaluation telemetry', async () => {
      const m = await req('GET', `/aiops/models/${fast.id}/metrics`, g.viewer);
      expect(m.status).to.equal(200);
      expect(m.body).to.include({ calls: 5, errors: 0, input_tokens: 500, output_tokens: 250 });
      expect(m.body.latency_ms.p95).to.equal(100);
      expect(m.body.cost.telemetry_usd).to.equal('0.050000');
      // 500 input tokens at 10 and 250 output at 30 per million.
      expect(m.body.cost.priced).to.equal('0.012500');
      expect(m.body.evaluations).to.deep.equal([{ metric: 'faithfulness', count: 1, avg: 0.9, p50: 0.9, pass_rate: null }]);
      expect(m.body.method).to.be.a('string');
      expect((await req('GET', `/aiops/models/${fast.id}/metrics`, g.acme)).status).to.equal(404);
      expect((await req('GET', `/aiops/models/${fast.id}/metrics?since=2030-01-01T00:00:00Z&until=2029-01-01T00:00:00Z`, g.viewer)).status).to.equal(422);
      expect((await req('GET', `/aiops/models/${fast.id}/metrics`, null)).status).to.equal(401);
    });

    it('routes a request to the model the limits allow, from measured latency, cost and quality', async () => {
      const route = (body: Record<string, unknown>, token = g.member) => req('POST', '/aiops/routing/route', token, { task: 'chat', ...body });
      const cheapest = await route({});
      expect(cheapest.status).to.equal(200);
      expect(cheapest.body.model.name).to.equal('cheap-model');
      const quick = await route({ max_latency_ms: 300 });
      expect(quick.body.model.id).to.equal(fast.id);
      expect(quick.body.refused.find((r: any) => r.name === 'cheap-model').reasons[0]).to.match(/p95 latency 900 ms above max_latency_ms 300/);
      expect(quick.body.evidence.latency_ms.p95).to.equal(100);
      expect((await route({ max_cost_usd: 0.001 })).body.model.name).to.equal('cheap-model');
      expect((await route({ min_quality: 0.8 })).body.model.id).to.equal(fast.id);
      expect((await route({ prefer: 'latency' })).body.model.id).to.equal(fast.id);
      const none = await route({ max_latency_ms: 50 });
      expect(none.status).to.equal(409);
      expect(none.body.code).to.equal('NO_ELIGIBLE_MODEL');
      expect((await route({ max_latency_ms: -1 })).status).to.equal(422);
      expect((await route({}, g.viewer)).status).to.equal(403);
      expect((await route({}, null as never)).status).to.equal(401);
      // Another tenant has no models: nothing to route to.
      expect((await route({}, g.acme)).status).to.equal(409);
    });
  });

  describe('training jobs', () => {
    before(async () => {
      // 40 calls whose latency is a line in their input tokens, and every fifth an error.
      const evs = Array.from({ length: 40 }, (_, i) => ({ provider: 'local', request_model: 'train-data', input_tokens: 10 * i, output_tokens: 5, duration_ms: 2 * 10 * i + 50, status: i % 5 === 0 ? 'error' : 'ok' }));
      expect((await ingest('llm-call', evs)).status).to.equal(202);
    });
    const dataset = { source: 'llm-calls', model: 'train-data', features: ['input_tokens'], label: 'duration_ms' };

    it('trains a linear model on a kernel worker, reports metrics per epoch and registers a version', async () => {
      const r = await req('POST', '/aiops/training/jobs', g.member, { model_name: 'latency-predictor', kind: 'linear', dataset, epochs: 60, epochs_per_task: 20, learning_rate: 0.3, validation_share: 0.25 });
      expect(r.status).to.equal(202);
      expect(r.body.state).to.equal('queued');
      const done = await settled(g.t, `/aiops/training/jobs/${r.body.id}`, g.viewer);
      expect(done.body.state).to.equal('succeeded');
      expect(done.body.epochs_done).to.equal(60);
      expect(done.body.progress).to.equal(1);
      expect(done.body.metrics).to.have.length(60);
      expect(done.body.metrics.map((m: any) => m.epoch)).to.deep.equal(Array.from({ length: 60 }, (_, i) => i + 1));
      expect(done.body.metrics[59].loss).to.be.below(done.body.metrics[0].loss);
      expect(done.body.metrics[59].metric).to.equal('r2');
      expect(done.body.metrics[59].value).to.be.above(0.99);
      expect(done.body.result).to.include({ train_rows: 30, validation_rows: 10 });
      const model = await req('GET', `/aiops/models/${done.body.model_id}`, g.viewer);
      expect(model.body).to.include({ name: 'latency-predictor', version: '1', provider: 'local', task: 'regression', kernel: 'compute', training_job_id: r.body.id });
      // Standardised input: the weight is slope × std of the input tokens (2 × 115.43...).
      expect(model.body.parameters.weights[0]).to.be.closeTo(2 * 115.434, 1);
      expect(events.filter((e) => e.type === 'training_job' && e.data.job_id === r.body.id).map((e) => e.data.state)).to.deep.equal(['queued', 'running', 'succeeded']);
      expect(events.filter((e) => e.type === 'training_progress' && e.data.job_id === r.body.id)).to.have.length(3);
      const list = await req('GET', '/aiops/training/jobs?state=succeeded', g.viewer);
      expect(list.body.jobs.map((j: any) => j.id)).to.include(r.body.id);
      expect((await req('GET', `/aiops/training/jobs/${r.body.id}`, g.acme)).status).to.equal(404);
      expect((await req('GET', '/aiops/training/jobs', g.acme)).body.jobs).to.deep.equal([]);
    });

    it('trains a logistic model on the error label', async () => {
      const r = await req('POST', '/aiops/training/jobs', g.member, { model_name: 'error-classifier', kind: 'logistic', dataset: { ...dataset, features: ['input_tokens', 'duration_ms'], label: 'error' }, epochs: 10 });
      const done = await settled(g.t, `/aiops/training/jobs/${r.body.id}`, g.viewer);
      expect(done.body.state).to.equal('succeeded');
      expect(done.body.metrics[0].metric).to.equal('accuracy');
      expect((await req('GET', `/aiops/models/${done.body.model_id}`, g.viewer)).body.task).to.equal('classification');
    });

    it('trains on the tenant’s kernel task outcomes', async () => {
      // Slow tasks fail, fast ones succeed: a failure classifier on duration.
      const at = new Date().toISOString();
      const rows = Array.from({ length: 20 }, (_, i) => ({ kernel_id: 'analytics', node_id: 'n', task: 'describe', ok: i < 10, duration_ms: i < 10 ? 5 + i : 500 + i, wait_ms: 1, error: i < 10 ? null : 'timeout', tenant_id: 'platform', at }));
      await g.t.host.services.db('task_outcomes').insert(rows);
      const r = await req('POST', '/aiops/training/jobs', g.member, { model_name: 'failure-classifier', kind: 'logistic', dataset: { source: 'task-outcomes', kernel: 'analytics', features: ['duration_ms'], label: 'failed' }, epochs: 30, learning_rate: 1, validation_share: 0 });
      expect(r.status).to.equal(202);
      const done = await settled(g.t, `/aiops/training/jobs/${r.body.id}`, g.viewer);
      expect(done.body.state).to.equal('succeeded');
      expect(done.body.result).to.include({ source: 'task-outcomes', label: 'failed', train_rows: 20, validation_rows: 0 });
      expect(done.body.metrics[29].value).to.equal(1);
      // Another tenant holds no outcomes: nothing to train on.
      const other = await req('POST', '/aiops/training/jobs', g.acme, { model_name: 'x', kind: 'logistic', dataset: { source: 'task-outcomes', features: ['duration_ms'], label: 'failed' } });
      expect(other.body.code).to.equal('INSUFFICIENT_DATA');
    });

    it('cancels a running job by aborting its task, and refuses to cancel a finished one', async () => {
      const r = await req('POST', '/aiops/training/jobs', g.member, { model_name: 'long', kind: 'linear', dataset, epochs: 5000, epochs_per_task: 1, learning_rate: 0.01 });
      await eventually(async () => (await req('GET', `/aiops/training/jobs/${r.body.id}`, g.viewer)).body.epochs_done > 0);
      expect((await req('POST', `/aiops/training/jobs/${r.body.id}/cancel`, g.viewer)).status).to.equal(403);
      expect((await req('POST', `/aiops/training/jobs/${r.body.id}/cancel`, g.acme)).status).to.equal(404);
      const c = await req('POST', `/aiops/training/jobs/${r.body.id}/cancel`, g.member);
      expect(c.status).to.equal(200);
      expect(c.body.state).to.equal('cancelled');
      expect(c.body.epochs_done).to.be.below(5000);
      expect(c.body.model_id).to.equal(null);
      const again = await req('POST', `/aiops/training/jobs/${r.body.id}/cancel`, g.member);
      expect(again.status).to.equal(409);
      expect(again.body).to.include({ code: 'INVALID_STATE', state: 'cancelled' });
    });

    it('refuses bad training input with 422 and nothing stored', async () => {
      const post = (body: Record<string, unknown>, token = g.member) => req('POST', '/aiops/training/jobs', token, { model_name: 'm', kind: 'linear', dataset, ...body });
      const before = (await req('GET', '/aiops/training/jobs', g.viewer)).body.jobs.length;
      expect((await post({ dataset: { ...dataset, features: ['nope'] } })).body.detail[0].loc).to.deep.equal(['body', 'dataset', 'features', 0]);
      expect((await post({ kind: 'logistic' })).body.detail[0].loc).to.deep.equal(['body', 'dataset', 'label']);
      const empty = await post({ dataset: { ...dataset, model: 'no-such-model' } });
      expect(empty.status).to.equal(422);
      expect(empty.body.code).to.equal('INSUFFICIENT_DATA');
      expect((await post({ epochs: 0 })).status).to.equal(422);
      expect((await post({}, g.viewer)).status).to.equal(403);
      expect((await post({}, null as never)).status).to.equal(401);
      expect((await req('GET', '/aiops/training/jobs', g.viewer)).body.jobs.length).to.equal(before);
      expect((await req('GET', `/aiops/training/jobs/${MISSING}`, g.viewer)).status).to.equal(404);
      expect((await req('GET', '/aiops/training/jobs?state=bogus', g.viewer)).status).to.equal(422);
      expect((await req('GET', '/aiops/training/jobs', null)).status).to.equal(401);
    });
  });

  describe('costs, budgets and alerts', () => {
    it('records costs exactly and sums them with telemetry costs by model, provider, tenant and day', async () => {
      const rec = await req('POST', '/aiops/costs/record', g.member, { provider: 'openai', model: 'fast-model', amount: '1.25', currency: 'USD', description: 'batch job' });
      expect(rec.status).to.equal(201);
      expect(rec.body).to.include({ amount: '1.250000', currency: 'USD', provider: 'openai', model: 'fast-model' });
      const eur = { provider: 'openai', amount: 2, currency: 'EUR' };
      const once = await g.t.request('POST', '/aiops/costs/record', { token: g.member, body: eur, headers: { 'Idempotency-Key': 'eur-1' } });
      expect(once.body.amount).to.equal('2.000000');
      // A retry with the same key is stored once and answered the same.
      const retry = await g.t.request('POST', '/aiops/costs/record', { token: g.member, body: eur, headers: { 'Idempotency-Key': 'eur-1' } });
      expect(retry.body.id).to.equal(once.body.id);
      expect((await g.t.request('POST', '/aiops/costs/record', { token: g.member, body: eur, headers: { 'Idempotency-Key': 'k'.repeat(129) } })).status).to.equal(422);
      expect((await req('POST', '/aiops/costs/record', g.member, { provider: 'openai', amount: '0.1234567' })).body.detail[0].loc).to.deep.equal(['body', 'amount']);
      expect((await req('POST', '/aiops/costs/record', g.member, { provider: 'openai', amount: -1 })).status).to.equal(422);
      expect((await req('POST', '/aiops/costs/record', g.member, { provider: 'openai', amount: 1, currency: 'usd' })).status).to.equal(422);
      expect((await req('POST', '/aiops/costs/record', g.viewer, { provider: 'openai', amount: 1 })).status).to.equal(403);
      expect((await req('POST', '/aiops/costs/record', null, { provider: 'openai', amount: 1 })).status).to.equal(401);

      const s = await req('GET', '/aiops/costs/summary?group_by=model', g.viewer);
      expect(s.status).to.equal(200);
      const fastUsd = s.body.groups.find((x: any) => x.key.model === 'fast-model' && x.currency === 'USD');
      // 1.25 recorded + 5 calls × 0.01 from telemetry.
      expect(fastUsd).to.include({ amount: '1.300000', records: 1, llm_calls: 5 });
      expect(s.body.totals.find((x: any) => x.currency === 'EUR').amount).to.equal('2.000000');
      const byDay = await req('GET', '/aiops/costs/summary?group_by=provider,day', g.viewer);
      expect(byDay.body.groups[0].key).to.have.keys('provider', 'day');
      expect((await req('GET', '/aiops/costs/summary?group_by=colour', g.viewer)).status).to.equal(422);
      expect((await req('GET', '/aiops/costs/summary', g.acme)).body.groups).to.deep.equal([]);
      expect((await req('GET', '/aiops/costs/summary', null)).status).to.equal(401);
      const tenants = await req('GET', '/aiops/costs/summary?group_by=tenant', null as never);
      expect(tenants.status).to.equal(401);
      const admin = await g.t.request('GET', '/aiops/costs/summary?group_by=tenant');
      expect(admin.body.group_by).to.deep.equal(['tenant']);
    });

    it('creates budgets and raises an alert once per crossed threshold, also on the bus', async () => {
      const b = await req('POST', '/aiops/costs/budgets', g.member, { name: 'openai monthly', amount: '1.00', provider: 'openai', thresholds: [0.5, 1, 5] });
      expect(b.status).to.equal(201);
      expect(b.body).to.include({ amount: '1.000000', currency: 'USD', period: 'month', provider: 'openai' });
      const alerts = await req('GET', `/aiops/costs/alerts?budget_id=${b.body.id}`, g.viewer);
      expect(alerts.status).to.equal(200);
      // 1.3005 USD spent with openai (1.25 recorded, 0.0505 in telemetry) of 1.00: 0.5 and 1 crossed by spend.
      const actual = alerts.body.alerts.filter((a: any) => a.kind === 'actual').map((a: any) => a.threshold).sort();
      expect(actual).to.deep.equal([0.5, 1]);
      expect(alerts.body.alerts[0].spend).to.equal('1.300500');
      const again = await req('GET', `/aiops/costs/alerts?budget_id=${b.body.id}`, g.viewer);
      expect(again.body.alerts).to.have.length(alerts.body.alerts.length);
      expect(events.filter((e) => e.type === 'cost_alert' && e.data.budget_id === b.body.id)).to.have.length(alerts.body.alerts.length);
      expect((await req('GET', '/aiops/costs/alerts', g.acme)).body.alerts).to.deep.equal([]);
      expect((await req('POST', '/aiops/costs/budgets', g.member, { name: 'zero', amount: 0 })).status).to.equal(422);
      expect((await req('POST', '/aiops/costs/budgets', g.member, { name: 'p', amount: 1, period: 'week' })).status).to.equal(422);
      expect((await req('POST', '/aiops/costs/budgets', g.viewer, { name: 'v', amount: 1 })).status).to.equal(403);
      expect((await req('POST', '/aiops/costs/budgets', null, { name: 'v', amount: 1 })).status).to.equal(401);
      expect((await req('GET', '/aiops/costs/alerts?budget_id=nope', g.viewer)).status).to.equal(422);
      expect((await req('GET', '/aiops/costs/alerts', null)).status).to.equal(401);
    });
  });

  describe('health, stats and GPU allocations', () => {
    it('answers health from the registry, the kernels and the training runner', async () => {
      const h = await req('GET', '/aiops/health', g.viewer);
      expect(h.status).to.equal(200);
      expect(h.body.components.map((c: any) => c.name)).to.deep.equal(['registry', 'kernel:compute', 'kernel:llm', 'training']);
      expect(h.body.components[0]).to.include({ status: 'ok' });
      // A paused kernel has no active node: down, and the whole degraded.
      const actor = { source: 'manual' as const, actor: 'test' };
      await g.t.host.services.mesh.pauseKernel('llm', actor);
      try {
        const paused = await req('GET', '/aiops/health', g.viewer);
        expect(paused.body.components[2]).to.include({ name: 'kernel:llm', status: 'down' });
        expect(paused.body.status).to.equal('degraded');
      } finally {
        await g.t.host.services.mesh.resumeKernel('llm', actor);
      }
      expect((await req('GET', '/aiops/health', null)).status).to.equal(401);
    });

    it('counts the tenant’s models, jobs, calls and spend', async () => {
      const s = await req('GET', '/aiops/stats', g.viewer);
      expect(s.status).to.equal(200);
      expect(s.body.models.total).to.equal((await req('GET', '/aiops/models', g.viewer)).body.models.length);
      expect(s.body.training_jobs.succeeded).to.equal(3);
      expect(s.body.llm_calls).to.equal(50);
      expect(s.body.budgets).to.equal(1);
      const other = await req('GET', '/aiops/stats', g.acme);
      expect(other.body).to.include({ llm_calls: 0, budgets: 0, alerts: 0 });
      expect(other.body.models.total).to.equal(0);
      expect((await req('GET', '/aiops/stats?since=yesterday', g.viewer)).status).to.equal(422);
      expect((await req('GET', '/aiops/stats', null)).status).to.equal(401);
    });

    it('lists GPU allocations from the shared inventory (this machine has no GPU: none)', async () => {
      const a = await req('GET', '/aiops/gpu/allocations', g.viewer);
      expect(a.status).to.equal(200);
      expect(a.body).to.deep.equal({ allocations: [], devices: 0, next_cursor: null });
      expect((await req('GET', '/aiops/gpu/allocations', null)).status).to.equal(401);
    });
  });
});
