import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { TestHost } from '../../helpers/host';
import { startGroupHost } from '../agi/group-host';

// A small local server speaking the OpenAI chat-completions protocol: it asks for the tool the
// user's words name, then answers with the tool result it was given (and log-probabilities).
describe('copilot plugin (spec 4.14): with a model (OpenAI-compatible tool calling)', () => {
  let server: http.Server;
  let t: TestHost;
  let viewer: string;
  let operator: string;
  const requests: Array<{ messages: Array<{ role: string; content: string | null }>; tools: Array<{ function: { name: string } }> }> = [];
  before(async () => {
    server = http.createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(text);
        requests.push(body);
        const last = body.messages[body.messages.length - 1];
        const user = [...body.messages].reverse().find((m: { role: string }) => m.role === 'user').content as string;
        let message: Record<string, unknown>;
        if (last.role === 'tool') message = { role: 'assistant', content: `Done: ${JSON.parse(last.content).note}` };
        else if (/drain/.test(user)) message = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'drain_node', arguments: JSON.stringify({ node_id: 'trading-1' }) } }] };
        else if (/kernels/.test(user)) message = { role: 'assistant', content: null, tool_calls: [{ id: 'c2', type: 'function', function: { name: 'list_kernels', arguments: '{}' } }] };
        else message = { role: 'assistant', content: 'I only talk about the platform.' };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ model: body.model, choices: [{ message, finish_reason: 'stop', logprobs: { content: [{ logprob: -0.2 }, { logprob: -0.4 }] } }] }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    t = await startGroupHost({ mesh: { settings: { llm: { base_url: base, model: 'tiny' } } } });
    viewer = (await t.userToken('viewer')).token;
    operator = (await t.userToken('operator')).token;
  });
  after(async () => {
    await t.stop();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const chat = (body: unknown, token: string) => t.request('POST', '/copilot/chat', { token, body });

  it('the model plans with the platform tools; its calls are real and their results go back to it', async () => {
    const r = await chat({ message: 'which kernels are there?' }, viewer);
    expect(r.status).to.equal(200);
    expect(r.body.response).to.match(/^Done: 2 kernel\(s\): analytics/);
    expect(r.body.reasoning_steps.map((s: { type: string }) => s.type)).to.deep.equal(['model', 'tool_call', 'model']);
    expect(r.body.confidence).to.be.closeTo(Math.exp(-0.3), 1e-3);
    const sent = requests[requests.length - 1]!;
    expect(sent.tools.map((x) => x.function.name)).to.include.members(['list_kernels', 'drain_node', 'run_workflow']);
    expect(sent.messages[sent.messages.length - 1]!.role).to.equal('tool');
  });

  it('a drain the model asks for is refused for a viewer and needs confirmation for an operator', async () => {
    const v = await chat({ message: 'drain trading please', confirm: true }, viewer);
    expect(v.body.reasoning_steps.find((s: { type: string }) => s.type === 'tool_call')).to.include({ status: 'forbidden' });
    expect((await t.request('GET', '/mesh/nodes/trading-1', { token: viewer })).body.state).to.equal('active');
    const ask = await chat({ message: 'drain trading please' }, operator);
    expect(ask.body.pending_confirmation).to.deep.equal({ tool: 'drain_node', args: { node_id: 'trading-1' } });
    expect(ask.body.confidence).to.equal(null);
    const yes = await chat({ message: 'yes', conversation_id: ask.body.conversation_id }, operator);
    expect(yes.body.actions_taken[0].tool).to.equal('drain_node');
    expect(['draining', 'drained']).to.include((await t.request('GET', '/mesh/nodes/trading-1', { token: viewer })).body.state);
  });

  it('a model answer without tools is passed on', async () => {
    const r = await chat({ message: 'tell me a joke' }, viewer);
    expect(r.body.response).to.equal('I only talk about the platform.');
    expect(r.body.actions_taken).to.deep.equal([]);
  });
});
