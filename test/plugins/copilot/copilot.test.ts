import { expect } from 'chai';
import type { TestHost } from '../../helpers/host';
import { MISSING, ok, startGroupHost, workflow } from '../agi/group-host';

// Without llm settings: the intent parser answers.
describe('copilot plugin (spec 4.14): intent parser', () => {
  let t: TestHost;
  let viewer: string;
  let member: string;
  let operator: string;
  let other: string;
  before(async () => {
    t = await startGroupHost();
    viewer = (await t.userToken('viewer')).token;
    member = (await t.userToken('member')).token;
    operator = (await t.userToken('operator')).token;
    other = (await t.userToken('operator', 'acme')).token;
    await workflow(t, member, 'nightly report', ok);
  });
  after(() => t.stop());

  const chat = (body: unknown, token: string | null = operator) => t.request('POST', '/copilot/chat', { token, body });
  const nodeState = async () => (await t.request('GET', '/mesh/nodes/analytics-1', { token: viewer })).body.state;

  it('refuses to drain a node for a viewer, even when confirmed', async () => {
    const r = await chat({ message: 'drain node analytics-1', confirm: true }, viewer);
    expect(r.status).to.equal(200);
    expect(r.body.response).to.match(/needs the operator role/);
    expect(r.body.actions_taken).to.deep.equal([]);
    expect(r.body.reasoning_steps.find((s: { type: string }) => s.type === 'tool_call')).to.include({ tool: 'drain_node', status: 'forbidden' });
    expect(await nodeState()).to.equal('active');
  });

  it('drains a node for an operator after confirmation, and records the conversation', async () => {
    const ask = await chat({ message: 'Please drain node analytics-1' });
    expect(ask.status).to.equal(200);
    expect(ask.body.pending_confirmation).to.deep.equal({ tool: 'drain_node', args: { node_id: 'analytics-1' } });
    expect(ask.body.actions_taken).to.deep.equal([]);
    expect(ask.body.confidence).to.equal(1);
    expect(await nodeState()).to.equal('active');
    const yes = await chat({ message: 'confirm', conversation_id: ask.body.conversation_id });
    expect(yes.status).to.equal(200);
    expect(yes.body.conversation_id).to.equal(ask.body.conversation_id);
    expect(yes.body.actions_taken).to.have.length(1);
    expect(yes.body.actions_taken[0]).to.include({ tool: 'drain_node' });
    expect(yes.body.pending_confirmation).to.equal(null);
    expect(['draining', 'drained']).to.include(await nodeState());
    const h = await t.request('GET', `/copilot/conversations/${ask.body.conversation_id}`, { token: viewer });
    expect(h.status).to.equal(200);
    expect(h.body.messages.map((m: { role: string }) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
    expect(h.body.messages[3].actions_taken[0].tool).to.equal('drain_node');
    expect(h.body.pending_confirmation).to.equal(null);
    // The answer is an insight chain of agent copilot.
    const chain = await t.request('GET', `/agi/insight_chains/${yes.body.chain_id}`, { token: viewer });
    expect(chain.body).to.include({ agent_id: 'copilot' });
    expect(chain.body.decision.state).to.equal('applied');
    // Back to active for the other tests (resume works on draining? no: abort, or resume when drained).
    await t.request('POST', '/mesh/nodes/analytics-1/drain/abort', { token: operator });
    await t.request('POST', '/mesh/nodes/analytics-1/resume', { token: operator });
    expect(await nodeState()).to.equal('active');
  });

  it('a confirmed request acts at once; "cancel" drops a pending one', async () => {
    const r = await chat({ message: 'pause node analytics-1', confirm: true });
    expect(r.body.actions_taken[0]).to.include({ tool: 'pause_node' });
    expect(await nodeState()).to.equal('paused');
    const ask = await chat({ message: 'resume node analytics-1' });
    const no = await chat({ message: 'cancel', conversation_id: ask.body.conversation_id });
    expect(no.body.response).to.match(/Cancelled/);
    expect(await nodeState()).to.equal('paused');
    await chat({ message: 'resume node analytics-1', confirm: true });
    expect(await nodeState()).to.equal('active');
  });

  it('answers about kernels, node state, incidents, SLO burn and costs from the live platform', async () => {
    const k = await chat({ message: 'list kernels' }, viewer);
    expect(k.body.response).to.match(/2 kernel\(s\): analytics .*trading/);
    expect(k.body.confidence).to.equal(1);
    const n = await chat({ message: 'what is the status of node trading-1?' }, viewer);
    expect(n.body.response).to.match(/^Node trading-1 of trading is active/);
    expect(n.body.confidence).to.be.within(0.5, 1);
    expect((await chat({ message: 'any open incidents?' }, viewer)).body.response).to.equal('There are no open incidents.');
    const slo = await chat({ message: 'SLO burn rate of trading' }, viewer);
    expect(slo.body.response).to.equal('trading: no tasks in the window.');
    const cost = await chat({ message: 'what did we spend?' }, viewer);
    expect(cost.body.response).to.match(/^Cost since .*: \$0\.0000\.$/);
    const unknown = await chat({ message: 'write me a poem about queues' }, viewer);
    expect(unknown.body.confidence).to.equal(0);
    expect(unknown.body.response).to.match(/llm.endpoint is not configured/);
    expect(unknown.body.actions_taken).to.deep.equal([]);
  });

  it('runs a workflow by name for a member, not for a viewer', async () => {
    const r = await chat({ message: 'run workflow nightly report', confirm: true }, member);
    expect(r.body.actions_taken[0].tool).to.equal('run_workflow');
    const e = await t.request('GET', `/ops/workflows/${r.body.actions_taken[0].result.execution_id}`, { token: member });
    expect(e.status).to.equal(200);
    const v = await chat({ message: 'run workflow nightly report', confirm: true }, viewer);
    expect(v.body.reasoning_steps[1]).to.include({ status: 'forbidden' });
    const missing = await chat({ message: 'run workflow nothing like it', confirm: true }, member);
    expect(missing.body.reasoning_steps[1]).to.include({ status: 'error' });
  });

  it('auth, bad input and tenant isolation', async () => {
    expect((await chat({ message: 'list kernels' }, null)).status).to.equal(401);
    expect((await chat({ message: '' })).status).to.equal(422);
    expect((await chat({ message: 'hi', extra: 1 })).status).to.equal(422);
    expect((await chat({ message: 'list kernels', conversation_id: MISSING })).status).to.equal(404);
    const mine = await chat({ message: 'list kernels' });
    expect((await chat({ message: 'list kernels', conversation_id: mine.body.conversation_id }, other)).status).to.equal(404);
    expect((await t.request('GET', `/copilot/conversations/${mine.body.conversation_id}`, { token: other })).status).to.equal(404);
    expect((await t.request('GET', `/copilot/conversations/${mine.body.conversation_id}`, { token: null })).status).to.equal(401);
    expect((await t.request('GET', '/copilot/conversations/nope', { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', `/copilot/conversations/${MISSING}`, { token: viewer })).status).to.equal(404);
  });
});
