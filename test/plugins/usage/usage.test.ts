import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { eventually } from '../../helpers/eventually';
import { startHost, type TestHost } from '../../helpers/host';
import { llm, telemetryPlugins } from '../../helpers/telemetry';
import { billingPlugins } from '../billing/plugins';

// Usage metering of telemetry and LLM tokens, the usage query's rules, and proposal wording
// through a configured LLM endpoint (a local server speaking the OpenAI chat protocol).
describe('billing: usage metering and LLM wording', () => {
  let t: TestHost;
  let server: http.Server;
  const prompts: string[] = [];
  let member: { token: string };

  before(async () => {
    server = http.createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(text) as { model: string; messages: Array<{ content: string }> };
        prompts.push(body.messages[body.messages.length - 1].content);
        const content = `Dear customer,\n\n${body.messages[body.messages.length - 1].content.split('\n\n').slice(1).join('\n\n')}`;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ model: body.model, choices: [{ message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 50, completion_tokens: 40 } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const extra = telemetryPlugins.filter((p) => !billingPlugins.some((b) => b.id === p.id));
    t = await startHost({ plugins: [...billingPlugins, ...extra], config: { billing: { usageFlushMs: 20 }, mesh: { settings: { llm: { base_url: base, model: 'writer' } } } } });
    member = await t.userToken('member', 'meter-co', 'pro');
  });
  after(async () => {
    await t.stop();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('counts ingested telemetry events and LLM tokens per tenant and hour', async () => {
    const r = await t.request('POST', '/observability/v1/ingest/llm-call', { token: member.token, body: { events: [llm({ input_tokens: 100, output_tokens: 20 }), llm({ input_tokens: 7, output_tokens: 3, request_model: 'small' })] } });
    expect(r.status).to.be.oneOf([200, 201, 202]);
    const u = await eventually(async () => {
      const x = await t.request('GET', '/usage/meter-co?granularity=hour', { token: member.token });
      return x.body.usage?.some((row: { metric: string }) => row.metric === 'llm_tokens') ? x.body : null;
    });
    const tokens = u.usage.filter((x: { metric: string }) => x.metric === 'llm_tokens').reduce((a: number, x: { quantity: number }) => a + x.quantity, 0);
    expect(tokens).to.equal(130);
    const events = u.usage.filter((x: { metric: string }) => x.metric === 'telemetry_events').reduce((a: number, x: { quantity: number }) => a + x.quantity, 0);
    expect(events).to.equal(2);
    expect(u.usage[0].period).to.match(/^\d{4}-\d\d-\d\dT\d\d:00:00\.000Z$/);
    expect(u.storage_bytes).to.be.greaterThan(0);
    const day = await t.request('GET', '/usage/meter-co?granularity=day&metric=requests', { token: member.token });
    expect(day.body.usage.every((x: { metric: string; period: string }) => x.metric === 'requests' && x.period.endsWith('T00:00:00.000Z'))).to.equal(true);
  });

  it("usage query: 401, another tenant's is 404, a reversed window or unknown metric is 422", async () => {
    expect((await t.request('GET', '/usage/meter-co', { token: null })).status).to.equal(401);
    const other = await t.userToken('viewer', 'other-co', 'pro');
    expect((await t.request('GET', '/usage/meter-co', { token: other.token })).status).to.equal(404);
    expect((await t.request('GET', '/usage/meter-co?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', { token: member.token })).status).to.equal(422);
    expect((await t.request('GET', '/usage/meter-co?metric=bananas', { token: member.token })).status).to.equal(422);
    expect((await t.request('GET', '/usage/meter-co')).status).to.equal(200);
  });

  it('words the proposal through the configured LLM, keeping the figures', async () => {
    const r = await t.request('POST', '/gtm/generate_proposal', { body: { company: 'Acme', expected_usage: { requests_per_month: 1_000_000 } } });
    expect(r.status).to.equal(200);
    expect(r.body.document.wording).to.equal('llm');
    expect(r.body.document.text).to.match(/^Dear customer/);
    expect(r.body.document.text).to.include(r.body.recommendation.monthly.amount);
    expect(prompts[prompts.length - 1]).to.include('Proposal for Acme');
  });
});
