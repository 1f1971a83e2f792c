// The receiver's pure parts: decoding (protobuf through the generated OpenTelemetry code,
// OTLP/JSON with hex ids), the mapping of spans, metric points and log records to what is
// stored, and the partial-success answers.
import { expect } from 'chai';
import { decodeJson, decodeProtobuf, responseJson } from '../../../plugins/otlp/decode';
import { mapLogs } from '../../../plugins/otlp/logs';
import { mapMetrics } from '../../../plugins/otlp/metrics';
import { collectors } from '../../../plugins/otlp/proto';
import { mapSpan, mapSpans } from '../../../plugins/otlp/spans';
import { storable } from '../../../plugins/otlp/attrs';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN = 'b7ad6b7169203331';
const PARENT = '00f067aa0ba902b7';
const START = 1_763_900_000_000_000_000n;
const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
const int = (key: string, v: number) => ({ key, value: { intValue: v } });

function span(extra: Record<string, unknown> = {}) {
  return {
    traceId: TRACE, spanId: SPAN, parentSpanId: PARENT, name: 'chat gpt-4o', kind: 3,
    startTimeUnixNano: String(START), endTimeUnixNano: String(START + 1_500_000_000n), ...extra,
  };
}
const request = (spans: unknown[], resource = [str('service.name', 'billing-api')]) => ({
  resourceSpans: [{ resource: { attributes: resource }, scopeSpans: [{ scope: { name: 'openai-instrumentation' }, spans }] }],
});

/** The JSON body through protobuf and back: the same message both ways. */
function viaProtobuf(json: Record<string, unknown>) {
  const message = decodeJson('traces', structuredClone(json));
  const bytes = collectors.traces.request.encode(message).finish();
  return decodeProtobuf('traces', bytes);
}

describe('otlp: decoding', () => {
  it('decodes OTLP/JSON (hex ids, int64 as strings) and the same message as protobuf alike', () => {
    const body = request([span({ attributes: [str('gen_ai.provider.name', 'openai'), str('gen_ai.request.model', 'gpt-4o'), int('gen_ai.usage.input_tokens', 12)] })]);
    for (const message of [decodeJson('traces', structuredClone(body)), viaProtobuf(body)]) {
      const mapped = mapSpans(message);
      expect(mapped.total).to.equal(1);
      const e = mapped.events['llm-call'][0].event;
      expect(e).to.include({ trace_id: TRACE, span_id: SPAN, parent_span_id: PARENT, duration_ms: 1500, input_tokens: 12, provider: 'openai' });
      expect(e.timestamp).to.equal(new Date(Number(START / 1_000_000n)).toISOString());
    }
  });

  it('refuses bytes that are not a protobuf message and JSON that is not OTLP (400 MALFORMED_BODY)', () => {
    for (const bad of [() => decodeProtobuf('traces', Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f])), () => decodeJson('traces', { resourceSpans: 'x' }), () => decodeJson('traces', [1]), () => decodeJson('logs', { resourceLogs: [{ scopeLogs: [{ logRecords: [{ traceId: 'zz' }] }] }] })]) {
      expect(bad).to.throw().with.property('code', 'MALFORMED_BODY');
    }
  });

  it('answers an empty success and a partial success with the signal\'s own field', () => {
    expect(responseJson('traces', null)).to.deep.equal({});
    expect(responseJson('logs', { rejected: 2, errorMessage: 'two bad' })).to.deep.equal({ partialSuccess: { rejectedLogRecords: '2', errorMessage: 'two bad' } });
    const type = collectors.metrics.response;
    const bytes = type.encode(type.fromObject({ partialSuccess: { rejectedDataPoints: 3, errorMessage: 'x' } })).finish();
    expect((type.decode(bytes) as { partialSuccess: { errorMessage: string } }).partialSuccess.errorMessage).to.equal('x');
  });
});

describe('otlp: spans to events', () => {
  const one = (extra: Record<string, unknown>, resource?: Array<ReturnType<typeof str>>) => mapSpans(decodeJson('traces', request([span(extra)], resource)));

  it('a GenAI span becomes an llm-call with model, provider, tokens, finish reasons and its resource', () => {
    const m = one({
      attributes: [
        str('gen_ai.operation.name', 'chat'), str('gen_ai.system', 'anthropic'), str('gen_ai.request.model', 'claude-3'), str('gen_ai.response.model', 'claude-3-5'),
        int('gen_ai.usage.prompt_tokens', 40), int('gen_ai.usage.completion_tokens', 7),
        { key: 'gen_ai.response.finish_reasons', value: { arrayValue: { values: [{ stringValue: 'stop' }] } } },
        { key: 'gen_ai.request.temperature', value: { doubleValue: 0.2 } },
      ],
    });
    const e = m.events['llm-call'][0].event;
    expect(e).to.include({ operation: 'chat', provider: 'anthropic', request_model: 'claude-3', response_model: 'claude-3-5', input_tokens: 40, output_tokens: 7, temperature: 0.2, status: 'ok', id: `${(START / 1_000_000n).toString(16).padStart(12, '0')}-${TRACE}-${SPAN}` });
    expect(e.finish_reasons).to.deep.equal(['stop']);
    expect(e.resource).to.deep.equal({ 'service.name': 'billing-api' });
    expect((e.attributes as Record<string, unknown>)['otel.scope.name']).to.equal('openai-instrumentation');
  });

  it('an error status makes an error with error.type (or _OTHER) and keeps the status message', () => {
    const attrs = [str('gen_ai.provider.name', 'openai'), str('gen_ai.request.model', 'gpt-4o')];
    const typed = one({ attributes: [...attrs, str('error.type', 'rate_limit')], status: { code: 2, message: 'slow down' } }).events['llm-call'][0].event;
    expect(typed).to.include({ status: 'error', error_type: 'rate_limit' });
    expect((typed.attributes as Record<string, unknown>)['otel.status_description']).to.equal('slow down');
    const bare = one({ attributes: attrs, status: { code: 2 } }).events['llm-call'][0].event;
    expect(bare).to.include({ status: 'error', error_type: '_OTHER' });
  });

  it('a GenAI span without a provider or model, or with an unknown operation, stays a span event', () => {
    expect(one({ attributes: [str('gen_ai.operation.name', 'invoke_agent'), str('gen_ai.agent.name', 'planner')] }).events.span).to.have.length(1);
    expect(one({ attributes: [str('gen_ai.operation.name', 'rerank'), str('gen_ai.provider.name', 'x'), str('gen_ai.request.model', 'y')] }).events.span).to.have.length(1);
  });

  it("a span of our kernel tasks becomes a kernel event; any other span a span event with its kind, service and scope", () => {
    const k = one({ attributes: [str('telemetry.event.type', 'kernel'), str('telemetry.kernel', 'trading'), str('telemetry.task', 'price'), str('telemetry.node', 'trading-1')] });
    expect(k.events.kernel[0].event).to.include({ kernel: 'trading', task: 'price', node: 'trading-1' });
    const s = one({ name: 'GET /orders', kind: 2, status: { code: 2, message: 'boom' } }).events.span[0].event;
    expect(s).to.include({ name: 'GET /orders', span_kind: 'server', service: 'billing-api', scope: 'openai-instrumentation', status: 'error', status_message: 'boom', parent_span_id: PARENT });
  });

  it('refuses spans without ids or that end before they start, naming why; keeps the others', () => {
    const m = mapSpans(decodeJson('traces', request([span(), span({ spanId: '' }), span({ spanId: '1111111111111111', endTimeUnixNano: '1' })])));
    expect(m.total).to.equal(3);
    expect(m.rejected.map((r) => r.index)).to.deep.equal([1, 2]);
    expect(m.rejected[0].reason).to.match(/span_id must be 8 bytes/);
    expect(m.rejected[1].reason).to.match(/ends before it starts/);
    expect(m.events.span).to.have.length(1);
  });

  it('bounds attributes as the store holds them: maps as JSON, long strings cut, 64 at most', () => {
    expect(storable({ kvlistValue: { values: [str('a', 'b')] } })).to.equal('{"a":"b"}');
    expect((storable({ stringValue: 'x'.repeat(5000) }) as string).length).to.equal(4096);
    expect(storable({ bytesValue: Buffer.from('hi') })).to.equal('aGk=');
    const many = Array.from({ length: 80 }, (_, i) => int(`k${i}`, i));
    const e: unknown = mapSpan(decodeJson('traces', request([span({ attributes: many })])).resourceSpans![0].scopeSpans![0].spans![0], null, {});
    expect(Object.keys((e as { event: { attributes: object } }).event.attributes)).to.have.length(64);
  });
});

describe('otlp: metrics and logs', () => {
  const point = (t: bigint, extra: Record<string, unknown> = {}) => ({ attributes: [str('gen_ai.token.type', 'input')], startTimeUnixNano: String(START), timeUnixNano: String(t), ...extra });

  it('stores the GenAI histograms point by point and counts the other series', () => {
    const m = mapMetrics(
      collectors.metrics.request.fromObject({
        resourceMetrics: [{
          resource: { attributes: [str('service.name', 'chatbot')] },
          scopeMetrics: [{
            metrics: [
              { name: 'gen_ai.client.token.usage', unit: '{token}', histogram: { aggregationTemporality: 2, dataPoints: [point(START + 10n, { count: 2, sum: 150, min: 50, max: 100, bucketCounts: [0, 2], explicitBounds: [10] })] } },
              { name: 'http.server.duration', sum: { dataPoints: [{ asDouble: 3, timeUnixNano: String(START) }, { asInt: 4, timeUnixNano: String(START) }] } },
              { name: 'gen_ai.client.operation.duration', histogram: { dataPoints: [{ timeUnixNano: '0' }] } },
            ],
          }],
        }],
      }),
    );
    expect(m.total).to.equal(4);
    expect(m.points).to.have.length(1);
    expect(m.points[0]).to.include({ name: 'gen_ai.client.token.usage', kind: 'histogram', value: 150, count: 2, min: 50, max: 100, service: 'chatbot', unit: '{token}' });
    expect(JSON.parse(m.points[0].data)).to.include({ temporality: 'cumulative' });
    expect(m.series.get('http.server.duration')).to.include({ stored: false, points: 2 });
    expect(m.rejected).to.equal(1);
    // The same point again hashes to the same id (so it is stored once).
    const again = mapMetrics(collectors.metrics.request.fromObject({ resourceMetrics: [{ resource: { attributes: [str('service.name', 'chatbot')] }, scopeMetrics: [{ metrics: [{ name: 'gen_ai.client.token.usage', unit: '{token}', histogram: { aggregationTemporality: 2, dataPoints: [point(START + 10n, { count: 2, sum: 150 })] } }] }] }] }));
    expect(again.points[0].id).to.equal(m.points[0].id);
  });

  it('maps log records with their trace ids, body and severity; refuses a record without a time', () => {
    const logs = mapLogs(
      decodeJson('logs', {
        resourceLogs: [{
          resource: { attributes: [str('service.name', 'chatbot')] },
          scopeLogs: [{ logRecords: [
            { timeUnixNano: String(START), severityNumber: 17, severityText: 'ERROR', body: { stringValue: 'model timed out' }, traceId: TRACE, spanId: SPAN },
            { observedTimeUnixNano: String(START), body: { kvlistValue: { values: [str('k', 'v')] } } },
            { body: { stringValue: 'when?' } },
          ] }],
        }],
      }),
    );
    expect(logs.total).to.equal(3);
    expect(logs.rejected).to.equal(1);
    expect(logs.rows[0]).to.include({ trace_id: TRACE, span_id: SPAN, severity_number: 17, severity_text: 'ERROR', body: 'model timed out', service: 'chatbot' });
    expect(logs.rows[1]).to.include({ trace_id: null, body: '{"k":"v"}' });
  });
});
