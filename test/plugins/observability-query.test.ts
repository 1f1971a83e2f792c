import crypto from 'node:crypto';
import { expect } from 'chai';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';
import { llm, telemetryPlugins } from '../helpers/telemetry';

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');
const INGEST = '/observability/v1/ingest';
// One base time, so that the spans' offsets are exact.
const BASE = Date.now();
const at = (msAgo: number) => new Date(BASE - msAgo).toISOString();

eachDatabase('observability: query', (db) => {
  let t: TestHost;
  const traceId = hex(16);
  const root = hex(8);
  const child1 = hex(8);
  const child2 = hex(8);
  const grandchild = hex(8);

  before(async () => {
    t = await startHost({ db, plugins: telemetryPlugins });
    // One trace of five spans: an agent call, two LLM calls under it, a tool under one, a policy check.
    const calls = [
      t.request('POST', `${INGEST}/llm-call`, {
        body: {
          events: [
            llm({ trace_id: traceId, span_id: root, operation: 'invoke_agent', request_model: 'agent-1', response_model: undefined, timestamp: at(60_000), duration_ms: 900 }),
            llm({ trace_id: traceId, span_id: child1, parent_span_id: root, timestamp: at(59_900), duration_ms: 300, input_tokens: 1000, output_tokens: 100, cost_usd: 0.01 }),
            llm({ trace_id: traceId, span_id: child2, parent_span_id: root, timestamp: at(59_500), duration_ms: 400, status: 'error', error_type: 'rate_limited', request_model: 'gpt-4o-mini', response_model: 'gpt-4o-mini' }),
          ],
        },
      }),
      t.request('POST', `${INGEST}/kernel`, { body: { trace_id: traceId, span_id: grandchild, parent_span_id: child1, kernel: 'llm', task: 'tokenize', duration_ms: 20, timestamp: at(59_850) } }),
      t.request('POST', `${INGEST}/policy`, { body: { trace_id: traceId, parent_span_id: root, policy_id: 'pii', decision: 'allow', duration_ms: 2, timestamp: at(59_950) } }),
    ];
    for (const r of await Promise.all(calls)) expect(r.status).to.equal(202);
    await t.request('POST', `${INGEST}/policy`, { body: { events: [{ policy_id: 'pii', decision: 'deny' }, { policy_id: 'toxicity', decision: 'allow' }] } });
    await t.request('POST', `${INGEST}/outcome`, { body: { events: [{ name: 'resolved', result: 'success', value: 10 }, { name: 'resolved', result: 'failure', value: 2 }, { name: 'resolved', result: 'success', value: 4 }] } });
    await t.request('POST', `${INGEST}/evaluation`, { body: { events: [0.2, 0.6, 0.9, 1].map((score) => ({ metric: 'faithfulness', score, passed: score >= 0.5 })) } });
  });
  after(() => t.stop());

  it('returns a trace as a tree with durations', async () => {
    const r = await t.request('GET', `/observability/v1/query/traces/${traceId.toUpperCase()}`);
    expect(r.status).to.equal(200);
    expect(r.body.span_count).to.equal(5);
    expect(r.body.duration_ms).to.equal(900);
    expect(r.body.spans).to.have.length(1);
    const top = r.body.spans[0];
    expect(top.span_id).to.equal(root);
    expect(top.name).to.equal('invoke_agent');
    expect(top.children.map((c: { span_id: string }) => c.span_id)).to.include.members([child1, child2]);
    expect(top.children).to.have.length(3);
    const c1 = top.children.find((c: { span_id: string }) => c.span_id === child1);
    expect(c1.duration_ms).to.equal(300);
    expect(c1.children.map((c: { span_id: string; type: string }) => [c.span_id, c.type])).to.deep.equal([[grandchild, 'kernel']]);
    expect(Date.parse(c1.end) - Date.parse(c1.start)).to.equal(300);
    expect(c1.event.input_tokens).to.equal(1000);
  });

  it('answers 404 for an unknown trace, 422 for a malformed id, 401 without a token', async () => {
    expect((await t.request('GET', `/observability/v1/query/traces/${hex(16)}`)).status).to.equal(404);
    expect((await t.request('GET', '/observability/v1/query/traces/xyz')).status).to.equal(422);
    expect((await t.request('GET', `/observability/v1/query/traces/${traceId}`, { token: null })).status).to.equal(401);
  });

  it('lists events with filters and cursor pages', async () => {
    const byTrace = await t.request('GET', `/observability/v1/query/events?trace_id=${traceId}`);
    expect(byTrace.body.events).to.have.length(5);
    const model = await t.request('GET', '/observability/v1/query/events?model=gpt-4o-mini');
    expect(model.body.events.map((e: { span_id: string }) => e.span_id)).to.deep.equal([child2]);
    const kernel = await t.request('GET', '/observability/v1/query/events?kernel=llm&type=kernel');
    expect(kernel.body.events).to.have.length(1);
    const errors = await t.request('GET', '/observability/v1/query/events?status=error');
    expect(errors.body.events.map((e: { error_type: string }) => e.error_type)).to.deep.equal(['rate_limited']);
    const old = await t.request('GET', `/observability/v1/query/events?until=${encodeURIComponent(at(30_000))}`);
    expect(old.body.events).to.have.length(5);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { events: Array<{ id: string }>; next_cursor: string | null } } = await t.request(
        'GET',
        `/observability/v1/query/events?limit=4${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.body.events.length).to.be.at.most(4);
      seen.push(...page.body.events.map((e) => e.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).to.have.length(14);
    expect(new Set(seen).size).to.equal(14);
    expect((await t.request('GET', '/observability/v1/query/events?limit=501')).status).to.equal(422);
    expect((await t.request('GET', '/observability/v1/query/events?type=nope')).status).to.equal(422);
    expect((await t.request('GET', '/observability/v1/query/events?cursor=abc')).status).to.equal(422);
    expect((await t.request('GET', '/observability/v1/query/events', { token: null })).status).to.equal(401);
  });

  it('aggregates LLM calls by model with error rate, percentiles, tokens and cost', async () => {
    const r = await t.request('GET', '/observability/v1/query/metrics/llm-calls');
    expect(r.status).to.equal(200);
    expect(r.body.totals).to.include({ count: 3, errors: 1 });
    const mini = r.body.groups.find((g: { key: { model: string } }) => g.key.model === 'gpt-4o-mini');
    expect(mini).to.deep.include({ count: 1, errors: 1, error_rate: 1 });
    expect(mini.latency_ms).to.include({ p50: 400, p95: 400, p99: 400 });
    const full = r.body.groups.find((g: { key: { model: string } }) => g.key.model === 'gpt-4o-2024-08-06');
    expect(full).to.include({ input_tokens: 1000, output_tokens: 100, cost_usd: 0.01 });
    const none = await t.request('GET', '/observability/v1/query/metrics/llm-calls?group_by=none');
    expect(none.body.groups[0].latency_ms).to.include({ p50: 400, p95: 900, p99: 900 });
    const byStatus = await t.request('GET', '/observability/v1/query/metrics/llm-calls?group_by=provider,status');
    expect(byStatus.body.groups.map((g: { key: Record<string, string> }) => g.key)).to.deep.include({ provider: 'openai', status: 'error' });
    const empty = await t.request('GET', `/observability/v1/query/metrics/llm-calls?since=${encodeURIComponent(at(10 * 86_400_000))}&until=${encodeURIComponent(at(9 * 86_400_000))}`);
    expect(empty.body.groups).to.deep.equal([]);
    expect((await t.request('GET', '/observability/v1/query/metrics/llm-calls?group_by=colour')).status).to.equal(422);
    expect((await t.request('GET', `/observability/v1/query/metrics/llm-calls?since=${encodeURIComponent(at(0))}&until=${encodeURIComponent(at(60_000))}`)).status).to.equal(422);
    expect((await t.request('GET', '/observability/v1/query/metrics/llm-calls', { token: null })).status).to.equal(401);
  });

  it('aggregates policy decisions, outcomes and evaluation scores', async () => {
    const p = await t.request('GET', '/observability/v1/query/metrics/policy-decisions');
    expect(p.status).to.equal(200);
    expect(p.body.totals).to.deep.equal({ count: 3, by_decision: { allow: 2, deny: 1 } });
    expect(p.body.groups.find((g: { key: Record<string, string> }) => g.key.policy === 'pii' && g.key.decision === 'deny').count).to.equal(1);
    const o = await t.request('GET', '/observability/v1/query/metrics/outcomes');
    expect(o.body.groups[0]).to.deep.include({ key: { name: 'resolved' }, count: 3, success: 2, failure: 1, success_rate: 0.6667 });
    expect(o.body.groups[0].value).to.include({ sum: 16, p50: 4, p99: 10 });
    const e = await t.request('GET', '/observability/v1/query/metrics/evaluations');
    expect(e.body.groups[0]).to.deep.include({ key: { metric: 'faithfulness' }, count: 4, passed: 3, failed: 1, pass_rate: 0.75 });
    expect(e.body.groups[0].score).to.include({ min: 0.2, max: 1, p50: 0.6, p95: 1 });
    for (const path of ['policy-decisions', 'outcomes', 'evaluations']) {
      expect((await t.request('GET', `/observability/v1/query/metrics/${path}?group_by=x`)).status).to.equal(422);
      expect((await t.request('GET', `/observability/v1/query/metrics/${path}`, { token: null })).status).to.equal(401);
    }
  });

  it('keeps every tenant to its own events; only admins name another tenant', async () => {
    const other = await t.userToken('member', 'globex');
    const own = await t.request('POST', `${INGEST}/llm-call`, { body: llm({ trace_id: traceId, span_id: hex(8) }), token: other.token });
    expect(own.status).to.equal(202);
    const trace = await t.request('GET', `/observability/v1/query/traces/${traceId}`, { token: other.token });
    expect(trace.body.span_count).to.equal(1);
    const events = await t.request('GET', '/observability/v1/query/events', { token: other.token });
    expect(events.body.events).to.have.length(1);
    expect(events.body.events[0].tenant_id).to.equal('globex');
    expect((await t.request('GET', '/observability/v1/query/events?tenant_id=platform', { token: other.token })).status).to.equal(403);
    expect((await t.request('GET', '/observability/v1/query/metrics/llm-calls?tenant_id=platform', { token: other.token })).status).to.equal(403);
    const asAdmin = await t.request('GET', '/observability/v1/query/events?tenant_id=globex');
    expect(asAdmin.body.events).to.have.length(1);
    const m = await t.request('GET', '/observability/v1/query/metrics/llm-calls', { token: other.token });
    expect(m.body.totals.count).to.equal(1);
  });

  it("reports the pipeline's own figures", async () => {
    const r = await t.request('GET', '/observability/metrics');
    expect(r.status).to.equal(200);
    expect(r.body.stored.by_type).to.deep.equal({ 'llm-call': 3, kernel: 1, policy: 3, outcome: 3, evaluation: 4 });
    expect(r.body.ingest.accepted).to.equal(14);
    expect(r.body.stored.payload_bytes).to.be.greaterThan(0);
    expect(r.body.storage.events_table_bytes).to.be.greaterThan(0);
    const viewer = await t.userToken('viewer', 'globex');
    const mine = await t.request('GET', '/observability/metrics', { token: viewer.token });
    expect(mine.body.tenant_id).to.equal('globex');
    expect(mine.body.storage).to.equal(null);
    expect((await t.request('GET', '/observability/metrics', { token: null })).status).to.equal(401);
    expect((await t.request('GET', '/observability/metrics?tenant_id=platform', { token: viewer.token })).status).to.equal(403);
  });

  it('answers liveness and readiness, and 503 when not ready', async () => {
    const live = await t.request('GET', '/observability/health/live', { token: null });
    expect(live.status).to.equal(200);
    expect(live.body.status).to.equal('alive');
    const ready = await t.request('GET', '/observability/health/ready', { token: null });
    expect(ready.status).to.equal(200);
    expect(ready.body.database.ok).to.equal(true);
    expect(ready.body.plugins_started).to.be.an('array');
    t.host.lifecycle.state = 'stopping';
    try {
      const notReady = await t.request('GET', '/observability/health/ready', { token: null });
      expect(notReady.status).to.equal(503);
      expect(notReady.body.detail).to.include({ status: 'not_ready', state: 'stopping' });
    } finally {
      t.host.lifecycle.state = 'running';
    }
  });
});
