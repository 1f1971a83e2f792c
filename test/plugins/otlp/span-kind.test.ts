// The span kind of the telemetry store (added for the receiver): stored through the same
// ingest as every kind, shown in the trace tree between the other kinds, read back whole.
import crypto from 'node:crypto';
import { expect } from 'chai';
import { eachDatabase, startHost, type TestHost } from '../../helpers/host';
import { llm, telemetryPlugins } from '../../helpers/telemetry';

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');

eachDatabase('telemetry store: the span kind', (db) => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ db, plugins: telemetryPlugins });
  });
  after(() => t.stop());

  it('stores spans with their kind, service, scope and resource, and links them into the trace with other kinds', async () => {
    const trace = hex(16);
    const [root, call] = [hex(8), hex(8)];
    const span = {
      id: `${trace}-${root}`, trace_id: trace, span_id: root, name: 'POST /chat', duration_ms: 900, span_kind: 'server', service: 'gateway',
      scope: '@opentelemetry/instrumentation-http', status: 'error', status_message: 'upstream failed', resource: { 'service.name': 'gateway' },
      attributes: { 'http.request.method': 'POST' },
    };
    expect((await t.request('POST', '/observability/v1/ingest/span', { body: span })).status).to.equal(202);
    expect((await t.request('POST', '/observability/v1/ingest/llm-call', { body: llm({ trace_id: trace, span_id: call, parent_span_id: root, resource: { 'service.name': 'gateway' } }) })).status).to.equal(202);
    const tree = (await t.request('GET', `/observability/v1/query/traces/${trace}`)).body;
    expect(tree.spans.map((s: { type: string; name: string }) => [s.type, s.name])).to.deep.equal([['span', 'POST /chat']]);
    expect(tree.spans[0].children.map((s: { type: string }) => s.type)).to.deep.equal(['llm-call']);
    const { id: _id, ...rest } = span;
    expect(tree.spans[0].event).to.deep.include({ ...rest, type: 'span' });
    expect(tree.spans[0].children[0].event.resource).to.deep.equal({ 'service.name': 'gateway' });
    const listed = (await t.request('GET', `/observability/v1/query/events?type=span&trace_id=${trace}`)).body.events;
    expect(listed.map((e: { id: string }) => e.id)).to.deep.equal([`${trace}-${root}`]);
  });

  it('refuses a span without a trace, a name or a duration (422), and an unknown span kind', async () => {
    const r = await t.request('POST', '/observability/v1/ingest/span', { body: { span_id: hex(8), span_kind: 'sideways' } });
    expect(r.status).to.equal(422);
    expect(r.body.detail.map((d: { loc: string[]; type: string }) => [d.loc.join('.'), d.type]).sort()).to.deep.equal([
      ['body.duration_ms', 'missing'],
      ['body.name', 'missing'],
      ['body.span_kind', 'enum'],
      ['body.trace_id', 'missing'],
    ]);
  });
});
