import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { TooManyRequests } from '../../core/errors';
import { definePlugin } from '../../core/plugin';
import { anyRoute as route } from '../helpers/host';
import kernelsPlugin from '../../plugins/kernels';
import { startHost, type TestHost } from '../helpers/host';
import { llm, telemetryPlugins } from '../helpers/telemetry';

// Stands in for the rate limiter (another area): a route that refuses with 429.
const limited = definePlugin({
  id: 'limited',
  prefix: '/limited',
  deps: {},
  routes: () => [route({ method: 'get', path: '/', summary: 'always over the limit', access: 'public', handler: () => { throw new TooManyRequests('slow down', 3); } })],
});

/** The value of one sample line, summed over every line whose labels include `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  let found = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
    found = true;
  }
  return found ? total : NaN;
}

describe('GET /metrics/ (OpenTelemetry Prometheus exporter)', () => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ plugins: [...telemetryPlugins, kernelsPlugin, limited] });
  });
  after(() => t.stop());

  it('serves the text format, which promtool accepts, without a token', async () => {
    await t.request('GET', '/health/', { token: null });
    const r = await t.request('GET', '/metrics/', { token: null });
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    // promtool must be installed (test/tools/services.sh does it); a missing one fails here.
    const out = execFileSync('promtool', ['check', 'metrics'], { input: r.text, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
    expect(out).to.not.match(/error/i);
        expect(sample(r.text, 'http_server_request_duration_count', { http_route: '/health/', http_request_method: 'GET' })).to.be.at.least(1);
    expect((await t.request('GET', '/api/metrics', { token: null })).status).to.equal(200);
  });

  it('counts requests by route and status, and rate-limit rejections', async () => {
    await t.request('GET', '/limited/', { token: null });
    await t.request('GET', '/limited/', { token: null });
    await t.request('GET', '/no/such/path', { token: null });
    const text = (await t.request('GET', '/metrics/', { token: null })).text;
    expect(sample(text, 'http_server_request_duration_count', { http_route: '/limited/', http_response_status_code: '429' })).to.equal(2);
    expect(sample(text, 'http_server_rate_limited_total', { http_route: '/limited/' })).to.equal(2);
    expect(sample(text, 'http_server_request_duration_count', { http_route: 'unmatched', http_response_status_code: '404' })).to.be.at.least(1);
    // Path parameters never become label values: the template is the label.
    expect(text).to.not.include('/no/such/path');
  });

  it('round trip: an ingested trace shows in GenAI metrics and ingest counts', async () => {
    const traceId = crypto.randomBytes(16).toString('hex');
    const root = crypto.randomBytes(8).toString('hex');
    const before = (await t.request('GET', '/metrics/', { token: null })).text;
    const baseInput = sample(before, 'gen_ai_client_token_usage_sum', { gen_ai_token_type: 'input', gen_ai_request_model: 'rt-model' });
    expect(Number.isNaN(baseInput)).to.equal(true);
    const r = await t.request('POST', '/observability/v1/ingest/llm-call', {
      body: {
        events: [
          llm({ trace_id: traceId, span_id: root, request_model: 'rt-model', response_model: 'rt-model', input_tokens: 700, output_tokens: 50, duration_ms: 1200, cost_usd: 0.5 }),
          llm({ trace_id: traceId, parent_span_id: root, request_model: 'rt-model', response_model: 'rt-model', input_tokens: 300, output_tokens: 25, duration_ms: 800, cost_usd: 0.25, status: 'error', error_type: 'timeout' }),
        ],
      },
    });
    expect(r.body.accepted).to.equal(2);
    await t.request('POST', '/observability/v1/ingest/llm-call', { body: { events: [llm({ id: r.body.ids[0], request_model: 'rt-model' }), { provider: 'x' }] } });
    const tree = await t.request('GET', `/observability/v1/query/traces/${traceId}`);
    expect(tree.body.spans[0].children).to.have.length(1);
    const agg = await t.request('GET', '/observability/v1/query/metrics/llm-calls');
    expect(agg.body.groups.find((g: { key: { model: string } }) => g.key.model === 'rt-model')).to.deep.include({ count: 2, errors: 1, input_tokens: 1000 });

    const text = (await t.request('GET', '/metrics/', { token: null })).text;
    const m = { gen_ai_request_model: 'rt-model' };
    expect(sample(text, 'gen_ai_client_token_usage_sum', { ...m, gen_ai_token_type: 'input' })).to.equal(1000);
    expect(sample(text, 'gen_ai_client_token_usage_sum', { ...m, gen_ai_token_type: 'output' })).to.equal(75);
    expect(sample(text, 'gen_ai_client_operation_duration_count', m)).to.equal(2);
    expect(sample(text, 'gen_ai_client_operation_duration_sum', m)).to.be.closeTo(2, 1e-9);
    expect(sample(text, 'gen_ai_client_operation_duration_count', { ...m, error_type: 'timeout' })).to.equal(1);
    expect(sample(text, 'gen_ai_client_cost_total', m)).to.be.closeTo(0.75, 1e-9);
    expect(sample(text, 'telemetry_ingest_events_total', { type: 'llm-call', outcome: 'duplicate' })).to.be.at.least(1);
    expect(sample(text, 'telemetry_ingest_events_total', { type: 'llm-call', outcome: 'rejected' })).to.be.at.least(1);
    execFileSync('promtool', ['check', 'metrics'], { input: text, stdio: ['pipe', 'pipe', 'pipe'] });
  });

  it('shows the kernel metrics of real tasks run on the mesh', async () => {
    const ok = await t.request('POST', '/kernels/analytics/tasks/describe', { body: { values: [1, 2, 3, 4] } });
    expect(ok.status).to.equal(200);
    const bad = await t.request('POST', '/kernels/analytics/tasks/describe', { body: { values: 'nope' } });
    expect(bad.status).to.equal(422);
    const text = (await t.request('GET', '/metrics/', { token: null })).text;
    expect(sample(text, 'kernel_tasks_total', { kernel: 'analytics', task: 'describe', outcome: 'ok' })).to.equal(1);
    expect(sample(text, 'kernel_task_duration_count', { kernel: 'analytics' })).to.equal(1);
    // Live gauges: every node of the mesh with its state, and every breaker.
    const nodes = t.host.services.mesh.nodes();
    expect(nodes.length).to.be.greaterThan(0);
    for (const n of nodes) expect(sample(text, 'kernel_node_state', { node: n.id, state: n.state }), n.id).to.equal(1);
    expect(sample(text, 'kernel_queue_depth', { node: nodes[0].id })).to.equal(0);
    expect(sample(text, 'kernel_breaker_state', { kernel: 'analytics', state: 'closed' })).to.equal(1);
    execFileSync('promtool', ['check', 'metrics'], { input: text, stdio: ['pipe', 'pipe', 'pipe'] });
    const overview = await t.request('GET', '/ops/observability/overview');
    expect(overview.body.host.kernel_nodes.map((n: { node: string }) => n.node).sort()).to.deep.equal(nodes.map((n) => n.id).sort());
    expect(overview.body.host.kernel_tasks).to.deep.include({ kernel: 'analytics', outcome: 'ok', count: 1 });
  });
});

describe('OTLP export (telemetry.otlp.endpoint)', () => {
  let t: TestHost;
  let collector: http.Server;
  const received: Array<{ path: string; body: string }> = [];
  before(async () => {
    collector = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += String(d)));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const port = (collector.address() as AddressInfo).port;
    t = await startHost({ plugins: telemetryPlugins, config: { telemetry: { otlp: { endpoint: `http://127.0.0.1:${port}`, exportIntervalMs: 60_000 } } } });
  });
  after(async () => {
    await t.stop();
    collector.close();
  });

  it('exports spans with the events\' own ids and GenAI attributes, and metrics', async () => {
    const traceId = crypto.randomBytes(16).toString('hex');
    const spanId = crypto.randomBytes(8).toString('hex');
    const parent = crypto.randomBytes(8).toString('hex');
    const r = await t.request('POST', '/observability/v1/ingest/llm-call', { body: llm({ trace_id: traceId, span_id: spanId, parent_span_id: parent, request_model: 'otlp-model' }) });
    expect(r.status).to.equal(202);
    await t.host.services.telemetry.sdk.flush();
    const traces = received.filter((x) => x.path === '/v1/traces').map((x) => x.body).join('\n');
    expect(traces).to.include('chat otlp-model');
    expect(traces).to.include('gen_ai.request.model');
    // OTLP/JSON carries ids as hex strings.
    expect(traces).to.include(traceId);
    expect(traces).to.include(spanId);
    expect(traces).to.include(parent);
    const metrics = received.filter((x) => x.path === '/v1/metrics').map((x) => x.body).join('\n');
    expect(metrics).to.include('gen_ai.client.token.usage');
  });
});
