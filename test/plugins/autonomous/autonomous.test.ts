import { expect } from 'chai';
import { eventually } from '../../helpers/eventually';
import type { TestHost } from '../../helpers/host';
import { failing, MISSING, ok, runToEnd, settled, startGroupHost, workflow } from '../agi/group-host';

describe('autonomous plugin (spec 4.8)', () => {
  let t: TestHost;
  let viewer: string;
  let member: string;
  let operator: string;
  let other: string;
  let flaky: string;
  let good: string;
  before(async () => {
    t = await startGroupHost();
    viewer = (await t.userToken('viewer')).token;
    member = (await t.userToken('member')).token;
    operator = (await t.userToken('operator')).token;
    other = (await t.userToken('operator', 'acme')).token;
    // A second analytics node, so that pausing one is within the blast-radius policy.
    expect((await t.request('POST', '/mesh/nodes', { token: operator, body: { kernel_id: 'analytics' } })).status).to.equal(201);
    // History to find: an operator pausing and resuming a node three times, a workflow failing three times.
    for (let i = 0; i < 3; i++) {
      expect((await t.request('POST', '/mesh/nodes/analytics-1/pause', { token: operator })).status).to.equal(200);
      expect((await t.request('POST', '/mesh/nodes/analytics-1/resume', { token: operator })).status).to.equal(200);
    }
    flaky = await workflow(t, member, 'flaky', failing);
    good = await workflow(t, member, 'good', ok);
    for (let i = 0; i < 3; i++) expect((await runToEnd(t, member, flaky)).state).to.equal('failed');
  });
  after(() => t.stop());

  const get = (p: string, token: string | null = viewer) => t.request('GET', p, { token });
  const post = (p: string, body: unknown, token: string | null = member) => t.request('POST', p, { token, body });

  describe('opportunities, skills and agents', () => {
    let sequence: any;
    let failingWf: any;
    let actionsSkill: string;
    let workflowSkill: any;

    it('a scan (202) finds the repeated manual sequence and the failing workflow', async () => {
      const r = await post('/autonomous/opportunities/scan', {});
      expect(r.status).to.equal(202);
      expect(r.body.state).to.equal('queued');
      const done = await settled(t, viewer, `/autonomous/opportunities/scans/${r.body.id}`);
      expect(done.state, done.error).to.equal('succeeded');
      const list = await get('/autonomous/opportunities');
      expect(list.status).to.equal(200);
      sequence = list.body.opportunities.find((o: { kind: string }) => o.kind === 'manual_sequence');
      failingWf = list.body.opportunities.find((o: { kind: string }) => o.kind === 'failing_workflow');
      expect(sequence.evidence).to.include({ occurrences: 3 });
      expect(sequence.evidence.sequence).to.deep.equal(['pause_node', 'resume_node']);
      expect(sequence.saving.unit).to.equal('operator_seconds');
      expect(failingWf.evidence).to.include({ workflow_id: flaky, runs: 3, failed: 3, failure_rate: 1 });
      expect(done.found).to.equal(list.body.opportunities.length);
      // A second scan refreshes the same opportunities instead of adding them again.
      const again = await post('/autonomous/opportunities/scan', { window_seconds: 3600 });
      await settled(t, viewer, `/autonomous/opportunities/scans/${again.body.id}`);
      expect((await get('/autonomous/opportunities')).body.opportunities).to.have.length(list.body.opportunities.length);
      expect((await get('/autonomous/opportunities?kind=failing_workflow')).body.opportunities).to.have.length(1);
    });

    it('scan and list: auth, bad input, tenant isolation', async () => {
      expect((await post('/autonomous/opportunities/scan', {}, viewer)).status).to.equal(403);
      expect((await post('/autonomous/opportunities/scan', {}, null)).status).to.equal(401);
      expect((await post('/autonomous/opportunities/scan', { window_seconds: 1 })).status).to.equal(422);
      expect((await get('/autonomous/opportunities', null)).status).to.equal(401);
      expect((await get('/autonomous/opportunities?kind=nope')).status).to.equal(422);
      expect((await get('/autonomous/opportunities', other)).body.opportunities).to.deep.equal([]);
      expect((await get(`/autonomous/opportunities/scans/${MISSING}`)).status).to.equal(404);
    });

    it('skills/generate makes a workflow skill (with retries) and an actions skill', async () => {
      const w = await post('/autonomous/skills/generate', { opportunity_id: failingWf.id });
      expect(w.status).to.equal(201);
      workflowSkill = w.body;
      expect(w.body.kind).to.equal('workflow');
      expect(w.body.steps[0]).to.include({ id: 's1', retries: 1 });
      const def = (await get('/ops/workflows/definitions')).body.definitions.find((d: { id: string }) => d.id === w.body.workflow_id);
      expect(def.steps[0].retries).to.equal(1);
      const a = await post('/autonomous/skills/generate', { opportunity_id: sequence.id, name: 'bounce analytics' });
      expect(a.status).to.equal(201);
      actionsSkill = a.body.id;
      expect(a.body).to.include({ kind: 'actions', name: 'bounce analytics', workflow_id: null });
      expect(a.body.inputs.map((i: { name: string }) => i.name)).to.deep.equal(['target_1', 'target_2']);
      expect(a.body.inputs[0].example).to.equal('analytics-1');
      expect((await post('/autonomous/skills/generate', { opportunity_id: sequence.id }, viewer)).status).to.equal(403);
      expect((await post('/autonomous/skills/generate', { opportunity_id: 'x' })).status).to.equal(422);
      expect((await post('/autonomous/skills/generate', { opportunity_id: sequence.id }, other)).status).to.equal(404);
      const list = await get('/autonomous/skills/blueprints');
      expect(list.body.blueprints.map((b: { id: string }) => b.id)).to.deep.equal([actionsSkill, workflowSkill.id]);
      expect((await get('/autonomous/skills/blueprints', other)).body.blueprints).to.deep.equal([]);
      expect((await get('/autonomous/skills/blueprints?limit=9999')).status).to.equal(422);
      expect((await get('/autonomous/skills/blueprints', null)).status).to.equal(401);
    });

    it('agents: generated with a role not above the caller, deployed once, run on schedule under their own identity', async () => {
      const inputs = { target_1: 'analytics-1', target_2: 'analytics-1' };
      expect((await post('/autonomous/agents/generate', { blueprint_id: actionsSkill, role: 'operator', inputs })).status).to.equal(403);
      expect((await post('/autonomous/agents/generate', { blueprint_id: actionsSkill, role: 'operator', inputs: { target_1: 'analytics-1' } }, operator)).status).to.equal(422);
      expect((await post('/autonomous/agents/generate', { blueprint_id: actionsSkill, schedule_seconds: 0, inputs }, operator)).status).to.equal(422);
      expect((await post('/autonomous/agents/generate', { blueprint_id: actionsSkill, inputs }, other)).status).to.equal(404);
      const g = await post('/autonomous/agents/generate', { blueprint_id: actionsSkill, role: 'operator', schedule_seconds: 1, inputs }, operator);
      expect(g.status).to.equal(201);
      expect(g.body).to.include({ state: 'generated', role: 'operator', runs: 0 });
      expect((await post(`/autonomous/agents/${g.body.id}/deploy`, {}, member)).status).to.equal(403);
      expect((await post(`/autonomous/agents/${g.body.id}/deploy`, {}, other)).status).to.equal(404);
      const d = await post(`/autonomous/agents/${g.body.id}/deploy`, {}, operator);
      expect(d.status).to.equal(200);
      expect(d.body.state).to.equal('deployed');
      const again = await post(`/autonomous/agents/${g.body.id}/deploy`, {}, operator);
      expect(again.status).to.equal(409);
      expect(again.body.code).to.equal('INVALID_STATE');
      // Its first action waits for a person: agent actions need approval by default.
      const waiting = await eventually(async () => (await get('/agi/approvals?state=pending')).body.approvals.find((a: { origin: string }) => a.origin === `agent:${g.body.id}`));
      expect(waiting.action).to.deep.include({ kind: 'pause_node', target: 'analytics-1' });
      expect((await get(`/agi/agents/${g.body.id}`)).body).to.include({ kind: 'generated', role: 'operator' });
      expect((await get(`/agi/agents/${g.body.id}`, other)).status).to.equal(404);
      // A workflow agent runs its workflow as agent:<id>.
      const w = await post('/autonomous/agents/generate', { blueprint_id: workflowSkill.id, schedule_seconds: 1 });
      expect((await post(`/autonomous/agents/${w.body.id}/deploy`, {})).status).to.equal(200);
      const run = await eventually(async () => (await get(`/ops/workflows?workflow_id=${workflowSkill.workflow_id}`)).body.executions.find((e: { created_by: string }) => e.created_by === `agent:${w.body.id}`));
      expect(run).to.be.an('object');
      // Stopped: no more runs (a run in progress finishes); deploy starts it again.
      expect((await post(`/autonomous/agents/${w.body.id}/stop`, {}, viewer)).status).to.equal(403);
      expect((await post(`/autonomous/agents/${w.body.id}/stop`, {}, other)).status).to.equal(404);
      expect((await post(`/autonomous/agents/${w.body.id}/stop`, {}, null)).status).to.equal(401);
      const stopped = await post(`/autonomous/agents/${w.body.id}/stop`, {});
      expect(stopped.status).to.equal(200);
      expect(stopped.body.state).to.equal('stopped');
      expect((await post(`/autonomous/agents/${w.body.id}/stop`, {})).body).to.include({ code: 'INVALID_STATE', state: 'stopped' });
      expect((await get(`/agi/agents/${w.body.id}`)).body.state).to.equal('stopped');
      const runsOf = async () => (await get(`/ops/workflows?workflow_id=${workflowSkill.workflow_id}&limit=500`)).body.executions.filter((e: { created_by: string; state: string }) => e.created_by === `agent:${w.body.id}`);
      await eventually(async () => (await runsOf()).every((e: { state: string }) => ['succeeded', 'failed'].includes(e.state)));
      const settledRuns = (await runsOf()).length;
      // Two schedule periods (1 s each) without a new run: the only way to see an absence.
      await new Promise((r) => setTimeout(r, 2200));
      expect((await runsOf()).length).to.equal(settledRuns);
      expect((await post(`/autonomous/agents/${w.body.id}/deploy`, {})).body.state).to.equal('deployed');
      await eventually(async () => (await runsOf()).length > settledRuns);
      expect((await post(`/autonomous/agents/${w.body.id}/stop`, {})).status).to.equal(200);
      expect((await post(`/autonomous/agents/${g.body.id}/stop`, {}, operator)).status).to.equal(200);
      expect((await post('/autonomous/agents/x/stop', {})).status).to.equal(422);
      expect((await post(`/autonomous/agents/${MISSING}/deploy`, {}, operator)).status).to.equal(404);
      expect((await post('/autonomous/agents/x/deploy', {}, operator)).status).to.equal(422);
      expect((await post('/autonomous/agents/generate', { blueprint_id: actionsSkill }, null)).status).to.equal(401);
    });
  });

  describe('workflow evolution and canaries', () => {
    const variant = (id: string) => settled(t, viewer, `/autonomous/workflows/variants/${id}`, ['evaluated', 'rolled_back']);

    it('a canary with a worse variant is not promoted', async () => {
      const v = await post(`/autonomous/workflows/${good}/evolve`, { changes: { steps: [{ id: 's1', task: 'regression', input: { x: [1, 1], y: [1, 2] } }] } });
      expect(v.status).to.equal(201);
      expect(v.body).to.include({ state: 'created', workflow_id: good });
      expect((await post(`/autonomous/workflows/variants/${v.body.id}/promote`, {})).body.code).to.equal('INVALID_STATE');
      const c = await post(`/autonomous/workflows/variants/${v.body.id}/canary`, { runs: 10, share: 0.5, mode: 'synthetic' });
      expect(c.status).to.equal(202);
      expect(c.body.state).to.equal('canary');
      expect((await post(`/autonomous/workflows/variants/${v.body.id}/canary`, {})).status).to.equal(409);
      const done = await variant(v.body.id);
      expect(done.canary.arms.baseline).to.include({ runs: 5, succeeded: 5 });
      expect(done.canary.arms.variant).to.include({ runs: 5, succeeded: 0 });
      expect(done.canary.test.fisher_p_b_lower).to.be.closeTo(1 / 252, 1e-9);
      expect(done.canary.decision).to.equal('do_not_promote');
      const p = await post(`/autonomous/workflows/variants/${v.body.id}/promote`, {});
      expect(p.status).to.equal(409);
      expect(p.body.code).to.equal('VARIANT_WORSE');
      const def = (await get('/ops/workflows/definitions')).body.definitions.find((d: { id: string }) => d.id === good);
      expect(def.steps).to.deep.equal(ok);
      const r = await post(`/autonomous/workflows/variants/${v.body.id}/rollback`, {});
      expect(r.status).to.equal(200);
      expect(r.body.state).to.equal('rolled_back');
      expect((await post(`/autonomous/workflows/variants/${v.body.id}/rollback`, {})).body).to.include({ code: 'INVALID_STATE', state: 'rolled_back' });
    });

    it('a better variant is promoted (through governance) and a rollback restores the definition', async () => {
      const v = await post(`/autonomous/workflows/${flaky}/evolve`, { changes: { steps: [{ id: 's1', task: 'describe', input: { values: [1, 2] } }] } });
      await post(`/autonomous/workflows/variants/${v.body.id}/canary`, { runs: 10, mode: 'synthetic' });
      const done = await variant(v.body.id);
      expect(done.canary.decision, JSON.stringify(done.canary.reasons)).to.equal('promote');
      const p = await post(`/autonomous/workflows/variants/${v.body.id}/promote`, {});
      expect(p.status).to.equal(200);
      expect(p.body.governance.status).to.equal('executed');
      expect(p.body.variant.state).to.equal('promoted');
      const def = () => get('/ops/workflows/definitions').then((r) => r.body.definitions.find((d: { id: string }) => d.id === flaky));
      expect((await def()).steps[0].task).to.equal('describe');
      const r = await post(`/autonomous/workflows/variants/${v.body.id}/rollback`, {});
      expect(r.body.state).to.equal('rolled_back');
      expect((await def()).steps).to.deep.equal(failing);
    });

    it("a live canary takes its share of the workflow's real runs, whoever starts them, then is evaluated", async () => {
      const v = await post(`/autonomous/workflows/${good}/evolve`, { changes: { steps: [{ id: 's1', task: 'regression', input: { x: [1, 1], y: [1, 2] } }] } });
      const c = await post(`/autonomous/workflows/variants/${v.body.id}/canary`, { runs: 10, share: 0.5 });
      expect(c.status).to.equal(202);
      expect(c.body.canary).to.include({ mode: 'live', runs: 10 });
      // Another variant of the same workflow cannot canary meanwhile.
      const other2 = await post(`/autonomous/workflows/${good}/evolve`, { changes: { retries: 1 } });
      expect((await post(`/autonomous/workflows/variants/${other2.body.id}/canary`, {})).body.code).to.equal('CANARY_RUNNING');
      // Nothing happens until the workflow runs: the canary waits for traffic.
      expect((await get(`/autonomous/workflows/variants/${v.body.id}`)).body.canary.progress).to.deep.equal({ done: 0, total: 10 });
      const runs = [];
      for (let i = 0; i < 10; i++) runs.push(await runToEnd(t, member, good));
      expect(runs.map((r) => r.route)).to.deep.equal(runs.map((_, i) => `canary:${v.body.id}:${i % 2 ? 'variant' : 'baseline'}`));
      expect(runs.map((r) => r.state)).to.deep.equal(runs.map((_, i) => (i % 2 ? 'failed' : 'succeeded')));
      const done = await variant(v.body.id);
      expect(done.canary.arms.baseline).to.include({ runs: 5, succeeded: 5 });
      expect(done.canary.arms.variant).to.include({ runs: 5, succeeded: 0 });
      expect(done.canary.arms.variant.executions.sort()).to.deep.equal(runs.filter((_, i) => i % 2).map((r) => r.id).sort());
      expect(done.canary.decision).to.equal('do_not_promote');
      // After the canary, runs are the definition's again.
      const after = await runToEnd(t, member, good);
      expect(after).to.include({ route: null, state: 'succeeded' });
      expect((await post(`/autonomous/workflows/variants/${v.body.id}/rollback`, {})).status).to.equal(200);
    });

    it('evolve derives changes from failures; refuses bad input, other tenants and no-ops', async () => {
      const d = await post(`/autonomous/workflows/${flaky}/evolve`, {});
      expect(d.status).to.equal(201);
      expect(d.body.changes).to.deep.equal({ steps: [{ id: 's1', retries: 1 }] });
      expect(d.body.steps[0].retries).to.equal(1);
      expect((await post(`/autonomous/workflows/${good}/evolve`, {})).status).to.equal(422);
      expect((await post(`/autonomous/workflows/${good}/evolve`, { changes: { steps: [{ id: 'nope', retries: 1 }] } })).status).to.equal(422);
      expect((await post(`/autonomous/workflows/${good}/evolve`, { changes: { steps: [{ id: 's1', task: 'no_such_task' }] } })).status).to.equal(422);
      expect((await post(`/autonomous/workflows/${good}/evolve`, { changes: { retries: 1 } }, viewer)).status).to.equal(403);
      expect((await post(`/autonomous/workflows/${good}/evolve`, { changes: { retries: 1 } }, null)).status).to.equal(401);
      expect((await post(`/autonomous/workflows/${good}/evolve`, { changes: { retries: 1 } }, other)).status).to.equal(404);
      for (const action of ['canary', 'promote', 'rollback']) {
        expect((await post(`/autonomous/workflows/variants/${d.body.id}/${action}`, {}, viewer)).status).to.equal(403);
        expect((await post(`/autonomous/workflows/variants/${d.body.id}/${action}`, {}, other)).status).to.equal(404);
        expect((await post(`/autonomous/workflows/variants/bad/${action}`, {})).status).to.equal(422);
      }
      expect((await post(`/autonomous/workflows/variants/${d.body.id}/canary`, { share: 2 })).status).to.equal(422);
      expect((await post(`/autonomous/workflows/variants/${d.body.id}/canary`, { mode: 'shadow' })).status).to.equal(422);
      expect((await post(`/autonomous/workflows/variants/${d.body.id}/rollback`, {})).body).to.include({ code: 'INVALID_STATE', state: 'created' });
    });
  });

  describe('corporate brain', () => {
    it('starts the planning loop once, runs an iteration, and shows status, plan and progress', async () => {
      expect((await post('/autonomous/corporate-brain/start', {}, viewer)).status).to.equal(403);
      expect((await post('/autonomous/corporate-brain/start', { interval_seconds: 1 })).status).to.equal(422);
      const s = await post('/autonomous/corporate-brain/start', { interval_seconds: 3600 });
      expect(s.status).to.equal(201);
      expect(s.body.state).to.equal('running');
      expect((await post('/autonomous/corporate-brain/start', {})).body).to.include({ code: 'INVALID_STATE', state: 'running' });
      expect((await post('/autonomous/corporate-brain/planning-loop', {}, viewer)).status).to.equal(403);
      const it = await post('/autonomous/corporate-brain/planning-loop', {});
      expect(it.status).to.equal(200);
      expect(it.body.loop_id).to.equal(s.body.id);
      // The flaky workflow failed every run: its objective is unmet and a recommendation made.
      expect(it.body.objectives.find((o: { id: string }) => o.id === 'workflow_failures').status).to.equal('unmet');
      expect(it.body.decisions.map((d: { kind: string }) => d.kind)).to.include('evolve_workflows');
      const st = await get('/autonomous/corporate-brain/status');
      expect(st.body).to.include({ running: true, iterations: 1 });
      expect(st.body.last_iteration.id).to.equal(it.body.id);
      expect((await get('/autonomous/corporate-brain/status', other)).body).to.include({ running: false, iterations: 0 });
      const plan = await get('/autonomous/corporate-brain/plan');
      expect(plan.body.iteration_id).to.equal(it.body.id);
      expect(plan.body.actions.length).to.equal(it.body.decisions.length);
      expect((await get('/autonomous/corporate-brain/plan', other)).body).to.deep.equal({ iteration_id: null, generated_at: null, objectives: [], actions: [] });
      const progress = await get('/autonomous/corporate-brain/progress');
      expect(progress.status).to.equal(200);
      expect(progress.body.items).to.deep.equal([]);
      for (const p of ['status', 'plan', 'progress']) expect((await get(`/autonomous/corporate-brain/${p}`, null)).status).to.equal(401);
    });
  });
});
