import { expect } from 'chai';
import { eachDatabase, type TestHost } from '../../helpers/host';
import { eventually } from '../../helpers/eventually';
import { MISSING, settled, startGroupHost } from './group-host';

// The analytics latency objective (1 ms) is set below the time of the tasks run on it, so that the planning loop
// finds it unmet and proposes a node; trading keeps its default SLO.
// Storage-heavy (chains, approvals, loops, simulations): on SQLite and PostgreSQL.
eachDatabase('agi plugin (spec 4.15)', (db) => {
  let t: TestHost;
  let viewer: string;
  let member: string;
  let operator: string;
  let operator2: string;
  let other: string;
  before(async () => {
    t = await startGroupHost({ slo: { domains: { analytics: { availability: 0.99, latencyP99Ms: 1, windowSeconds: 3600 }, trading: { availability: 0.999, latencyP99Ms: 250, windowSeconds: 3600 } } } }, db);
    viewer = (await t.userToken('viewer')).token;
    member = (await t.userToken('member')).token;
    operator = (await t.userToken('operator')).token;
    operator2 = (await t.userToken('operator')).token;
    other = (await t.userToken('operator', 'acme')).token;
    // Tasks of several milliseconds each: the 1 ms latency objective of analytics is unmet.
    const heavy = { interarrival_ms: [1, 2, 3], service_ms: [2, 3, 4], servers: 2, tasks: 20_000, replications: 3, latency_target_ms: 5 };
    for (let i = 0; i < 12; i++) await t.request('POST', '/kernels/analytics/tasks/simulate_queue', { token: member, body: { ...heavy, seed: i } });
    for (let i = 0; i < 12; i++) await t.request('POST', '/kernels/trading/tasks/price_option', { token: member, body: { type: 'call', spot: 100 + i, strike: 100, rate: 0.01, volatility: 0.2, time_years: 1 } });
  });
  after(() => t.stop());

  const get = (p: string, token: string | null = viewer) => t.request('GET', p, { token });
  const post = (p: string, body: unknown, token: string | null = member) => t.request('POST', p, { token, body });
  const nodes = async () => (await get('/kernels/analytics/status', operator)).body.nodes.length as number;

  describe('approvals gate the planned action', () => {
    let approvalId: string;
    let chainId: string;
    let loopId: string;

    it('a planning iteration proposes add_node on analytics; it waits for approval and changes nothing', async () => {
      const started = await post('/autonomous/corporate-brain/start', { interval_seconds: 3600 });
      expect(started.status).to.equal(201);
      loopId = started.body.id;
      const before = await nodes();
      const it = await post('/autonomous/corporate-brain/planning-loop', {});
      expect(it.status).to.equal(200);
      const d = it.body.decisions.find((x: { kind: string; target: string }) => x.kind === 'add_node' && x.target === 'analytics');
      expect(d, JSON.stringify(it.body.decisions)).to.include({ status: 'pending_approval' });
      approvalId = d.approval_id;
      chainId = d.chain_id;
      expect(await nodes()).to.equal(before);
      const a = await get(`/agi/approvals/${approvalId}`);
      expect(a.status).to.equal(200);
      expect(a.body).to.include({ state: 'pending', origin: 'agent:cognitive-loop', chain_id: chainId });
      expect(a.body.verdict.rules.find((r: { rule: string }) => r.rule === 'origin').outcome).to.equal('require_approval');
      // A second iteration does not propose the same waiting action again.
      const again = await post('/autonomous/corporate-brain/planning-loop', {});
      expect(again.body.decisions.filter((x: { kind: string }) => x.kind === 'add_node')).to.have.length(0);
      expect((await get('/agi/approvals?state=pending')).body.approvals.map((x: { id: string }) => x.id)).to.include(approvalId);
      expect((await get('/enterprise/human-ai/approvals/pending')).body.approvals.map((x: { id: string }) => x.id)).to.include(approvalId);
    });

    it('approval rules: viewer 403, member below the action role 403, another tenant 404', async () => {
      expect((await post(`/agi/approvals/${approvalId}/approve`, {}, null)).status).to.equal(401);
      expect((await post(`/agi/approvals/${approvalId}/approve`, {}, viewer)).status).to.equal(403);
      expect((await post(`/agi/approvals/${approvalId}/approve`, {}, member)).status).to.equal(403);
      expect((await post(`/agi/approvals/${approvalId}/approve`, {}, other)).status).to.equal(404);
      expect((await get(`/agi/approvals/${approvalId}`, other)).status).to.equal(404);
      expect((await post(`/agi/approvals/${approvalId}/approve`, { comment: 5 }, operator)).status).to.equal(422);
      expect((await post('/agi/approvals/not-a-uuid/approve', {}, operator)).status).to.equal(422);
      expect((await post(`/agi/approvals/${MISSING}/approve`, {}, operator)).status).to.equal(404);
      expect(await nodes()).to.equal(1);
    });

    it('approved by an operator, the action runs: a node is added; a second decision is 409', async () => {
      const r = await post(`/agi/approvals/${approvalId}/approve`, { comment: 'go' }, operator);
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ state: 'executed', comment: 'go' });
      expect(await nodes()).to.equal(2);
      const again = await post(`/agi/approvals/${approvalId}/reject`, {}, operator2);
      expect(again.status).to.equal(409);
      expect(again.body).to.include({ code: 'INVALID_STATE', state: 'executed' });
      const chain = await get(`/agi/insight_chains/${chainId}`);
      expect(chain.body.decision).to.include({ state: 'applied', approval_id: approvalId });
    });

    it('a rejected request does not run', async () => {
      const it = await post('/autonomous/corporate-brain/planning-loop', {});
      const d = it.body.decisions.find((x: { kind: string }) => x.kind === 'add_node');
      expect(d.status).to.equal('pending_approval');
      const r = await post(`/agi/approvals/${d.approval_id}/reject`, { comment: 'enough nodes' }, operator);
      expect(r.body.state).to.equal('rejected');
      expect(await nodes()).to.equal(2);
      expect((await get(`/agi/insight_chains/${d.chain_id}`)).body.decision.state).to.equal('rejected');
    });

    it('the enterprise view approves the same store', async () => {
      const it = await post('/autonomous/corporate-brain/planning-loop', {});
      const d = it.body.decisions.find((x: { kind: string }) => x.kind === 'add_node');
      expect((await post(`/enterprise/human-ai/approvals/${d.approval_id}/approve`, {}, viewer)).status).to.equal(403);
      const r = await post(`/enterprise/human-ai/approvals/${d.approval_id}/approve`, {}, operator);
      expect(r.status).to.equal(200);
      expect(r.body.state).to.equal('executed');
      expect(await nodes()).to.equal(3);
      expect((await get(`/agi/approvals/${d.approval_id}`)).body.state).to.equal('executed');
    });

    it('cognitive loop status, one loop with its iterations, and the loop figures', async () => {
      const s = await get('/agi/cognitive_loop/status');
      expect(s.status).to.equal(200);
      expect(s.body.running).to.equal(true);
      expect(s.body.loop.id).to.equal(loopId);
      expect(s.body.iterations.length).to.be.at.least(4);
      expect((await get('/agi/cognitive_loop/status', null)).status).to.equal(401);
      const l = await get(`/agi/cognitive_loop/${loopId}?limit=2`);
      expect(l.status).to.equal(200);
      expect(l.body.iterations).to.have.length(2);
      expect(l.body.next_cursor).to.be.a('string');
      expect(l.body.iterations[0].objectives.find((o: { id: string }) => o.id === 'latency:analytics').status).to.equal('unmet');
      expect((await get(`/agi/cognitive_loop/${loopId}`, other)).status).to.equal(404);
      expect((await get('/agi/cognitive_loop/nope')).status).to.equal(422);
      const k = await get('/agi/cognitive/kpis');
      expect(k.status).to.equal(200);
      expect(k.body).to.include({ approved: 2, rejected: 1, acceptance_rate: 2 / 3, applied_changes: 2 });
      expect(k.body.decisions).to.be.at.least(3);
      expect((await get('/agi/cognitive/kpis', other)).body).to.include({ decisions: 0, approved: 0, acceptance_rate: null });
    });

    it('insight chains: list, one, graph, replay, analyze; tenant-scoped', async () => {
      const list = await get('/agi/insight_chains?agent_id=cognitive-loop&limit=100');
      expect(list.status).to.equal(200);
      expect(list.body.insight_chains.map((c: { id: string }) => c.id)).to.include(chainId);
      expect((await get('/agi/insight_chains', other)).body.insight_chains).to.deep.equal([]);
      expect((await get('/agi/insight_chains?limit=0')).status).to.equal(422);
      expect((await get('/agi/insight_chains', null)).status).to.equal(401);
      const g = await get(`/agi/insight_chains/${chainId}/graph`);
      expect(g.status).to.equal(200);
      const types = g.body.nodes.map((n: { type: string }) => n.type);
      expect(types).to.include.members(['observation', 'inference', 'recommendation', 'decision']);
      expect(g.body.edges).to.deep.include({ source: 'o1', target: 'i1', relation: 'supports' });
      const r = await get(`/agi/insight_chains/${chainId}/replay`);
      expect(r.status).to.equal(200);
      // The latency target is still below any task time: the chain concludes the same.
      expect(r.body).to.include({ concluded_then: true, same_conclusion: true });
      expect(r.body.observations[0].replayable).to.equal(true);
      const a = await get(`/agi/insight_chains/${chainId}/analyze`);
      expect(a.status).to.equal(200);
      expect(a.body.decisive).to.have.length.greaterThan(0);
      expect(a.body.prediction.metric).to.equal('kernel_latency_p95_ms');
      for (const suffix of ['', '/graph', '/replay', '/analyze']) {
        expect((await get(`/agi/insight_chains/${chainId}${suffix}`, other)).status).to.equal(404);
        expect((await get(`/agi/insight_chains/bad${suffix}`)).status).to.equal(422);
      }
    });
  });

  describe('agents', () => {
    it('lists the platform agents and shows one with its history', async () => {
      const r = await get('/agi/agents');
      expect(r.status).to.equal(200);
      expect(r.body.agents.map((a: { id: string }) => a.id)).to.include.members(['cognitive-loop', 'ako', 'copilot']);
      const one = await get('/agi/agents/cognitive-loop');
      expect(one.status).to.equal(200);
      expect(one.body.history.insight_chains).to.be.at.least(3);
      expect((await get('/agi/agents/cognitive-loop', other)).body.history.insight_chains).to.equal(0);
      expect((await get('/agi/agents/nobody')).status).to.equal(404);
      expect((await get('/agi/agents', null)).status).to.equal(401);
      const chains = await get('/agi/agents/cognitive-loop/insight_chains?limit=1');
      expect(chains.status).to.equal(200);
      expect(chains.body.insight_chains).to.have.length(1);
      expect(chains.body.insight_chains[0].agent_id).to.equal('cognitive-loop');
      expect((await get('/agi/agents/nobody/insight_chains')).status).to.equal(404);
      expect((await get('/agi/agents/copilot/insight_chains?cursor=%25%25')).status).to.equal(422);
    });
  });

  describe('POST /agi/policy/validate', () => {
    it('names the rule that allows or blocks', async () => {
      const ok = await post('/agi/policy/validate', { kind: 'pause_node', target: 'analytics-1' }, operator);
      expect(ok.status).to.equal(200);
      expect(ok.body).to.include({ decision: 'allow', allowed: true });
      const viewerCheck = await post('/agi/policy/validate', { kind: 'pause_node', target: 'analytics-1' }, viewer);
      expect(viewerCheck.body.decision).to.equal('block');
      expect(viewerCheck.body.rules.find((r: { rule: string }) => r.rule === 'role')).to.include({ outcome: 'block' });
      const agent = await post('/agi/policy/validate', { kind: 'add_node', target: 'trading', agent_id: 'cognitive-loop' }, operator);
      expect(agent.body.decision).to.equal('require_approval');
      // trading has one node: draining it would leave none active.
      const last = await post('/agi/policy/validate', { kind: 'drain_kernel', target: 'trading' }, operator);
      expect(last.body.decision).to.equal('block');
      expect(last.body.rules.find((r: { rule: string }) => r.rule === 'blast_radius').outcome).to.equal('block');
      const unknown = await post('/agi/policy/validate', { kind: 'launch_rocket', target: 'x' }, operator);
      expect(unknown.body.decision).to.equal('block');
      expect((await post('/agi/policy/validate', { kind: 'pause_node', target: 'nowhere-9' }, operator)).status).to.equal(404);
      expect((await post('/agi/policy/validate', { kind: 'Bad Kind', target: 'x' }, operator)).status).to.equal(422);
      expect((await post('/agi/policy/validate', { kind: 'pause_node', target: 'analytics-1' }, null)).status).to.equal(401);
    });
  });

  describe('simulations', () => {
    it('lists scenarios per kernel', async () => {
      const r = await get('/agi/sim/scenarios');
      expect(r.status).to.equal(200);
      expect(r.body.scenarios.map((s: { id: string }) => s.id)).to.include.members(['load:analytics', 'node_loss:trading', 'load:trading', 'price:cost']);
      expect((await get('/agi/sim/scenarios', null)).status).to.equal(401);
    });

    it('runs a load scenario fitted to measured times; the same seed repeats exactly', async () => {
      const body = { seed: 1234, factor: 3, tasks: 500, replications: 5 };
      const a = await post('/agi/sim/scenarios/load:trading/run', body);
      expect(a.status).to.equal(202);
      expect(a.body).to.include({ state: 'queued', seed: 1234 });
      const ra = await settled(t, viewer, `/agi/sim/results/${a.body.id}`);
      expect(ra.state, ra.error).to.equal('succeeded');
      const b = await post('/agi/sim/scenarios/load:trading/run', body);
      const rb = await settled(t, viewer, `/agi/sim/results/${b.body.id}`);
      expect(rb.result.outcome).to.deep.equal(ra.result.outcome);
      expect(rb.result.baseline).to.deep.equal(ra.result.baseline);
      expect(ra.result.fitted.service_ms.n).to.be.at.least(12);
      expect(ra.result.outcome.wait_ms.mean).to.be.at.least(ra.result.baseline.wait_ms.mean);
      const c = await post('/agi/sim/scenarios/load:trading/run', { repeat_of: a.body.id });
      const rc = await settled(t, viewer, `/agi/sim/results/${c.body.id}`);
      expect(rc.seed).to.equal(1234);
      expect(rc.result.outcome).to.deep.equal(ra.result.outcome);
    });

    it('refuses what it cannot model, bad input and other tenants', async () => {
      expect((await post('/agi/sim/scenarios/load:analytics/run', {}, viewer)).status).to.equal(403);
      expect((await post('/agi/sim/scenarios/load:analytics/run', {}, null)).status).to.equal(401);
      expect((await post('/agi/sim/scenarios/load:nothing/run', {})).status).to.equal(404);
      expect((await post('/agi/sim/scenarios/load:analytics/run', { factor: -1 })).status).to.equal(422);
      expect((await post('/agi/sim/scenarios/load:analytics/run', { replications: 500 })).status).to.equal(422);
      const price = await post('/agi/sim/scenarios/price:cost/run', {});
      expect(price.status).to.equal(409);
      expect(price.body.code).to.equal('INSUFFICIENT_DATA');
      const mine = (await get('/agi/sim/results/' + MISSING)).status;
      expect(mine).to.equal(404);
      const runs = await post('/agi/sim/scenarios/node_loss:trading/run', { seed: 1 });
      // trading has one node: losing it leaves nothing to simulate.
      expect(runs.status).to.equal(409);
      const a = await post('/agi/sim/scenarios/load:trading/run', { seed: 5, tasks: 100, replications: 2 });
      await eventually(async () => (await get(`/agi/sim/results/${a.body.id}`)).body.state === 'succeeded');
      expect((await get(`/agi/sim/results/${a.body.id}`, other)).status).to.equal(404);
      expect((await get('/agi/sim/results/x')).status).to.equal(422);
    });
  });
});
