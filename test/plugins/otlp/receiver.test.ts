// The receiver through the real stack: the OpenTelemetry JS SDK's own OTLP exporters
// (protobuf and JSON, gzip or not) send to a running host, and what they sent is read back
// through the query routes.
import http from 'node:http';
import zlib from 'node:zlib';
import { expect } from 'chai';
import { Reader } from 'protobufjs/minimal';
import otlp from '../../../plugins/otlp';
import { collectors } from '../../../plugins/otlp/proto';
import { eventually } from '../../helpers/eventually';
import { eachDatabase, startHost, type TestHost } from '../../helpers/host';
import { telemetryPlugins } from '../../helpers/telemetry';
import { exportGenAiMetrics, exportLogs, exportSpans, makeTrace, SUCCESS, type Target } from './sdk';

const plugins = [...telemetryPlugins, otlp];
/** google.rpc.Status {code = 1, message = 2}, read with protobufjs's reader. */
function status(bytes: Uint8Array): { code: number; message: string } {
  const r = Reader.create(bytes);
  const out = { code: 0, message: '' };
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag >>> 3 === 1) out.code = r.int32();
    else if (tag >>> 3 === 2) out.message = r.string();
    else r.skipType(tag & 7);
  }
  return out;
}

/** The stable error code: from the JSON body, or from a protobuf Status's message (`CODE: ...`). */
const codeOf = async (r: Response) => {
  if (r.headers.get('content-type') === 'application/x-protobuf') return status(new Uint8Array(await r.arrayBuffer())).message.split(':')[0];
  return ((await r.json()) as { code: string }).code;
};

eachDatabase('otlp: the SDK exporters against a running host', (db) => {
  let t: TestHost;
  let target: Target;
  before(async () => {
    t = await startHost({ db, plugins });
    target = { base: `${t.url}/otlp`, headers: { authorization: `Bearer ${t.adminToken}` } };
  });
  after(() => t.stop());

  for (const [encoding, gzip] of [['protobuf', false], ['json', false], ['protobuf', true], ['json', true]] as const) {
    it(`stores a whole trace sent by the ${encoding} exporter${gzip ? ' with gzip' : ''}: GenAI span as llm-call, the others as spans, with their links`, async () => {
      const { spans, traceId, ids } = makeTrace({ model: `model-${encoding}-${gzip}` });
      const result = await exportSpans({ ...target, gzip }, encoding, spans);
      expect(result.code, String(result.error)).to.equal(SUCCESS);
      const tr = await t.request('GET', `/observability/v1/query/traces/${traceId}`);
      expect(tr.status).to.equal(200);
      expect(tr.body.span_count).to.equal(3);
      const [root] = tr.body.spans;
      expect(root).to.include({ span_id: ids.root, type: 'span', name: 'POST /chat' });
      expect(root.event).to.include({ span_kind: 'server', service: 'chat-gateway' });
      expect(root.event.resource).to.include({ 'service.name': 'chat-gateway', 'deployment.environment': 'test' });
      const [llm] = root.children;
      expect(llm).to.include({ span_id: ids.llm, type: 'llm-call', name: 'chat' });
      expect(llm.event).to.include({ provider: 'openai', request_model: `model-${encoding}-${gzip}`, input_tokens: 120, output_tokens: 30 });
      expect(llm.children.map((c: { span_id: string; type: string }) => [c.span_id, c.type])).to.deep.equal([[ids.tool, 'span']]);
    });
  }

  it('stores a span sent twice once (dedupe by trace and span id), and the llm-call metrics count it once', async () => {
    const { spans } = makeTrace({ model: 'dedupe-model', error: true });
    expect((await exportSpans(target, 'protobuf', spans)).code).to.equal(SUCCESS);
    expect((await exportSpans(target, 'json', spans)).code).to.equal(SUCCESS);
    const m = await t.request('GET', '/observability/v1/query/metrics/llm-calls?group_by=model');
    const row = m.body.groups.find((g: { key: Record<string, string> }) => g.key.model === 'dedupe-model-2024-08-06');
    expect(row).to.include({ count: 1, errors: 1 });
    const events = await t.request('GET', '/observability/v1/query/events?type=llm-call&model=dedupe-model-2024-08-06');
    expect(events.body.events).to.have.length(1);
    expect(events.body.events[0]).to.include({ status: 'error', error_type: 'timeout' });
  });

  it('stores the GenAI metrics the SDK exports and counts the other series', async () => {
    expect((await exportGenAiMetrics(target, 'metrics-model')).code).to.equal(SUCCESS);
    const usage = await t.request('GET', '/otlp/v1/query/metrics?name=gen_ai.client.token.usage');
    const mine = usage.body.points.filter((p: { attributes: Record<string, string> }) => p.attributes['gen_ai.request.model'] === 'metrics-model');
    const byType = Object.fromEntries(mine.map((p: { attributes: Record<string, string>; count: number; value: number }) => [p.attributes['gen_ai.token.type'], [p.count, p.value]]));
    expect(byType).to.deep.equal({ input: [2, 200], output: [1, 30] });
    expect(mine[0]).to.include({ kind: 'histogram', unit: '{token}', service: 'chat-gateway', temporality: 'cumulative' });
    const duration = await t.request('GET', '/otlp/v1/query/metrics?name=gen_ai.client.operation.duration');
    expect(duration.body.points.some((p: { value: number; attributes: Record<string, string> }) => p.attributes['gen_ai.request.model'] === 'metrics-model' && p.value === 1.25)).to.equal(true);
    const series = (await t.request('GET', '/otlp/v1/query/metric-series')).body.series;
    const counted = series.find((s: { name: string }) => s.name === 'http.server.requests');
    expect(counted).to.include({ stored: false, kind: 'sum' });
    expect(counted.points).to.be.at.least(1);
    expect((await t.request('GET', '/otlp/v1/query/metrics?name=http.server.requests')).body.points).to.deep.equal([]);
  });

  it('stores log records linked to their trace, from the protobuf and the JSON log exporters', async () => {
    const { spans, traceId, ids } = makeTrace();
    const llmSpan = spans.find((s) => s.spanContext().spanId === ids.llm)!;
    expect((await exportLogs(target, 'protobuf', llmSpan, ['first retry'])).code).to.equal(SUCCESS);
    expect((await exportLogs({ ...target, gzip: true }, 'json', llmSpan, ['second retry'])).code).to.equal(SUCCESS);
    const logs = await t.request('GET', `/otlp/v1/query/logs?trace_id=${traceId}`);
    expect(logs.body.records.map((r: { body: string; span_id: string; severity_text: string }) => [r.body, r.span_id, r.severity_text])).to.deep.equal([
      ['first retry', ids.llm, 'WARN'],
      ['second retry', ids.llm, 'WARN'],
    ]);
    expect(logs.body.records[0].attributes).to.deep.equal({ 'retry.count': 2 });
    expect(logs.body.records[0].resource).to.include({ 'service.name': 'chat-gateway' });
  });

  it('answers a partial success naming the refused spans, in the encoding of the request', async () => {
    const good = { traceId: 'aa'.repeat(16), spanId: 'bb'.repeat(8), name: 'ok', startTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n), endTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n) };
    const body = { resourceSpans: [{ scopeSpans: [{ spans: [good, { ...good, spanId: 'cc'.repeat(8), endTimeUnixNano: '5' }] }] }] };
    const json = await t.request('POST', '/otlp/v1/traces', { body });
    expect(json.status).to.equal(200);
    expect(json.body.partialSuccess.rejectedSpans).to.equal('1');
    expect(json.body.partialSuccess.errorMessage).to.match(/ends before it starts/);
    const bytes = collectors.traces.request.encode(collectors.traces.request.fromObject({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: Buffer.alloc(16, 7), spanId: Buffer.alloc(4, 1), name: 'short id', startTimeUnixNano: 1 }] }] }] })).finish();
    const res = await fetch(`${t.url}/otlp/v1/traces`, { method: 'POST', headers: { ...target.headers, 'content-type': 'application/x-protobuf' }, body: bytes });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/x-protobuf');
    const answer = collectors.traces.response.decode(new Uint8Array(await res.arrayBuffer())) as { partialSuccess: { rejectedSpans: { toNumber(): number }; errorMessage: string } };
    expect(answer.partialSuccess.rejectedSpans.toNumber()).to.equal(1);
    expect(answer.partialSuccess.errorMessage).to.match(/span_id must be 8 bytes/);
  });
});

describe('otlp: bad bodies, auth, back-pressure and the bare paths', () => {
  let t: TestHost;
  let auth: Record<string, string>;
  before(async () => {
    t = await startHost({ plugins, config: { telemetry: { otlpReceiver: { maxConcurrent: 1, retryAfterSeconds: 1 } } } });
    auth = { authorization: `Bearer ${t.adminToken}` };
  });
  after(() => t.stop());

  const post = (path: string, headers: Record<string, string>, body: Uint8Array | string) => fetch(`${t.url}${path}`, { method: 'POST', headers: { ...auth, ...headers }, body });

  it('400 MALFORMED_BODY for bytes that do not decode, a bad gzip stream or JSON that is not OTLP; nothing stored', async () => {
    const before = (await t.request('GET', '/observability/v1/metrics')).body;
    const cases = [
      await post('/otlp/v1/traces', { 'content-type': 'application/x-protobuf' }, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f])),
      await post('/otlp/v1/logs', { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' }, Buffer.from('not gzip')),
      await post('/otlp/v1/metrics', { 'content-type': 'application/json' }, JSON.stringify({ resourceMetrics: 7 })),
    ];
    for (const r of cases) {
      expect(r.status).to.equal(400);
      expect(await codeOf(r)).to.equal('MALFORMED_BODY');
    }
    // A protobuf request's failure is a protobuf google.rpc.Status (INVALID_ARGUMENT).
    const bad = await post('/otlp/v1/traces', { 'content-type': 'application/x-protobuf' }, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]));
    expect(bad.headers.get('content-type')).to.equal('application/x-protobuf');
    const st = status(new Uint8Array(await bad.arrayBuffer()));
    expect(st.code).to.equal(3);
    expect(st.message).to.match(/^MALFORMED_BODY: The body is not an OTLP traces protobuf message/);
    expect((await post('/otlp/v1/traces', { 'content-type': 'application/json' }, '{"resourceSpans": [')).status).to.equal(400);
    expect((await t.request('GET', '/observability/v1/metrics')).body).to.deep.equal(before);
  });

  it('415 for another content type or encoding; 413 past the body bound', async () => {
    const r = await post('/otlp/v1/traces', { 'content-type': 'text/plain' }, 'x');
    expect([r.status, await codeOf(r)]).to.deep.equal([415, 'UNSUPPORTED_MEDIA_TYPE']);
    const br = await post('/otlp/v1/traces', { 'content-type': 'application/x-protobuf', 'content-encoding': 'br' }, 'x');
    expect([br.status, await codeOf(br)]).to.deep.equal([415, 'UNSUPPORTED_ENCODING']);
    const bomb = zlib.gzipSync(Buffer.alloc(20 * 1024 * 1024));
    expect((await post('/otlp/v1/traces', { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' }, bomb)).status).to.equal(413);
  });

  it('401 without credentials, 403 for a viewer', async () => {
    const bytes = collectors.traces.request.encode({}).finish();
    const none = await fetch(`${t.url}/otlp/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: bytes });
    expect(none.status).to.equal(401);
    const viewer = (await t.userToken('viewer', 'acme')).token;
    expect((await post('/otlp/v1/traces', { 'content-type': 'application/x-protobuf', authorization: `Bearer ${viewer}` }, bytes)).status).to.equal(403);
    expect((await t.request('GET', '/otlp/v1/receiver', { token: viewer })).status).to.equal(403);
  });

  it("takes a tenant's ingest key as X-API-Key or bearer (the SDK exporter lands in the key's tenant); a revoked key is 401, and a key reads nothing", async () => {
    const operator = (await t.userToken('operator', 'keyco', 'enterprise')).token;
    const made = await t.request('POST', '/observability/v1/ingest-keys', { token: operator, body: { name: 'collector' } });
    expect(made.status).to.equal(201);
    const key: string = made.body.key;
    for (const headers of [{ 'x-api-key': key }, { authorization: `Bearer ${key}` }] as Array<Record<string, string>>) {
      const { spans, traceId } = makeTrace({ model: 'keyed-model' });
      const result = await exportSpans({ base: `${t.url}/otlp`, headers }, 'protobuf', spans);
      expect(result.code, String(result.error)).to.equal(SUCCESS);
      expect((await t.request('GET', `/observability/v1/query/traces/${traceId}`, { token: operator })).body.span_count).to.equal(3);
      expect((await t.request('GET', `/observability/v1/query/traces/${traceId}`)).status).to.equal(404);
    }
    const read = await fetch(`${t.url}/otlp/v1/query/logs`, { headers: { 'x-api-key': key } });
    expect(read.status).to.equal(403);
    expect((await t.request('DELETE', `/observability/v1/ingest-keys/${made.body.id}`, { token: operator })).status).to.equal(200);
    const revoked = await fetch(`${t.url}/otlp/v1/traces`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/x-protobuf' }, body: collectors.traces.request.encode({}).finish() });
    expect(revoked.status).to.equal(401);
  });

  it('the bare /v1/traces is 404 while telemetry.otlpReceiver.rootPaths is off', async () => {
    const r = await post('/v1/traces', { 'content-type': 'application/x-protobuf' }, collectors.traces.request.encode({}).finish());
    expect([r.status, await codeOf(r)]).to.deep.equal([404, 'ROUTE_NOT_FOUND']);
  });

  it('a burst over the bound is answered 429 with Retry-After, and the SDK exporter retries until it lands', async () => {
    // A request whose body arrives slowly holds the one slot.
    const { spans, traceId } = makeTrace({ model: 'burst-model' });
    const held = collectors.traces.request.encode({}).finish();
    const padded = Buffer.concat([Buffer.from(held), Buffer.from([0x62, 0x00])]);
    const slow = http.request(`${t.url}/otlp/v1/traces`, { method: 'POST', headers: { ...auth, 'content-type': 'application/x-protobuf', 'content-length': String(padded.length) } });
    const slowDone = new Promise<number>((resolve, reject) => {
      slow.on('response', (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      slow.on('error', reject);
    });
    slow.write(padded.subarray(0, 1));
    await eventually(async () => (await t.request('GET', '/otlp/v1/receiver')).body.in_flight === 1, 5000, 'the slow request to hold the slot');

    const refused = await post('/otlp/v1/traces', { 'content-type': 'application/x-protobuf' }, held);
    expect(refused.status).to.equal(429);
    expect(refused.headers.get('retry-after')).to.equal('1');
    expect(status(new Uint8Array(await refused.arrayBuffer())).code).to.equal(8); // RESOURCE_EXHAUSTED

    const exporting = exportSpans({ base: `${t.url}/otlp`, headers: auth }, 'protobuf', spans);
    await eventually(async () => (await t.request('GET', '/otlp/v1/receiver')).body.throttled >= 2, 5000, 'the exporter to be told to back off');
    slow.end(padded.subarray(1));
    expect(await slowDone).to.equal(200);
    const result = await exporting;
    expect(result.code, String(result.error)).to.equal(SUCCESS);
    expect((await t.request('GET', `/observability/v1/query/traces/${traceId}`)).body.span_count).to.equal(3);
  });
});

describe('otlp: the bare paths with rootPaths on', () => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ plugins, config: { telemetry: { otlpReceiver: { rootPaths: true } } } });
  });
  after(() => t.stop());

  it('an exporter given only the base URL lands at /v1/traces', async () => {
    const { spans, traceId } = makeTrace();
    const result = await exportSpans({ base: t.url, headers: { authorization: `Bearer ${t.adminToken}` } }, 'protobuf', spans);
    expect(result.code, String(result.error)).to.equal(SUCCESS);
    expect((await t.request('GET', `/observability/v1/query/traces/${traceId}`)).body.span_count).to.equal(3);
  });
});
