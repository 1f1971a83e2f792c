import { expect } from 'chai';
import { core } from '../../../core/services';
import { eventually } from '../../helpers/eventually';
import type { TestHost } from '../../helpers/host';
import { MISSING, ok, settled, startGroupHost, workflow } from '../agi/group-host';

// The change window is three days from today: every change a person asks for now is outside
// it and waits for approval (the blast-radius and role rules still block what they block).
describe('enterprise plugin (spec 4.16)', () => {
  let t: TestHost;
  let viewer: string;
  let member: string;
  let operator: string;
  let operator2: string;
  let other: string;
  let wf: string;
  const day = (new Date().getUTCDay() + 3) % 7;
  // The platform's clock, moved forward by the expiry test.
  const clock = { offset: 0, now: () => new Date(Date.now() + clock.offset) };
  before(async () => {
    t = await startGroupHost({ governance: { approvalTtlSeconds: 600, changeWindows: [{ days: [day], start: '00:00', end: '23:59' }] } }, 'sqlite', [[core.clock, clock]]);
    viewer = (await t.userToken('viewer')).token;
    member = (await t.userToken('member')).token;
    operator = (await t.userToken('operator')).token;
    operator2 = (await t.userToken('operator')).token;
    other = (await t.userToken('member', 'acme')).token;
    wf = await workflow(t, member, 'invoice run', ok);
    // Measured history of the trading kernel: one task a minute for the last hour, each taking
    // about a minute (a kernel near saturation on its one thread).
    const now = Date.now();
    const rows = Array.from({ length: 60 }, (_, i) => ({ kernel_id: 'trading', node_id: 'trading-1', task: 'price_option', ok: i % 10 !== 0, duration_ms: 55_000 + (i % 5) * 2000, wait_ms: 1, error: null, tenant_id: 'platform', at: new Date(now - (60 - i) * 58_000).toISOString() }));
    await t.host.services.db('task_outcomes').insert(rows);
  });
  after(() => t.stop());

  const get = (p: string, token: string | null = viewer) => t.request('GET', p, { token });
  const post = (p: string, body: unknown, token: string | null = member) => t.request('POST', p, { token, body });

  describe('processes and memory', () => {
    let processId: string;
    it('POST /enterprise/processes', async () => {
      const r = await post('/enterprise/processes', { name: 'Invoicing', workflow_id: wf, owners: ['ops@example.com'], sla_seconds: 60, department: 'Finance' });
      expect(r.status).to.equal(201);
      expect(r.body).to.include({ name: 'Invoicing', department: 'finance', sla_seconds: 60 });
      processId = r.body.id;
      expect((await post('/enterprise/processes', { name: 'x', workflow_id: MISSING, owners: ['a'], sla_seconds: 1, department: 'finance' })).status).to.equal(422);
      expect((await post('/enterprise/processes', { name: 'x', workflow_id: wf, owners: [], sla_seconds: 1, department: 'finance' })).status).to.equal(422);
      expect((await post('/enterprise/processes', { name: 'x', workflow_id: wf, owners: ['a'], sla_seconds: 1, department: 'finance' }, other)).status).to.equal(422);
      expect((await post('/enterprise/processes', { name: 'x', workflow_id: wf, owners: ['a'], sla_seconds: 1, department: 'finance' }, viewer)).status).to.equal(403);
      expect((await post('/enterprise/processes', {}, null)).status).to.equal(401);
      expect((await get('/enterprise/processes?department=finance')).body.processes.map((p: { id: string }) => p.id)).to.deep.equal([processId]);
      expect((await get('/enterprise/processes', other)).body.processes).to.deep.equal([]);
    });

    it('POST /enterprise/processes/{id}/execute runs the workflow and records the SLA', async () => {
      const r = await post(`/enterprise/processes/${processId}/execute`, {});
      expect(r.status).to.equal(202);
      expect(r.body).to.include({ process_id: processId, sla_seconds: 60 });
      const e = await settled(t, member, `/ops/workflows/${r.body.execution_id}`, ['succeeded', 'failed']);
      expect(e.state).to.equal('succeeded');
      const k = await eventually(async () => {
        const d = await get('/enterprise/kpi/by_department/finance');
        return d.body.processes.finished === 1 && d.body;
      });
      expect(k.processes).to.include({ processes: 1, runs: 1, succeeded: 1, sla_met: 1, sla_met_rate: 1 });
      expect(k.workflows[0]).to.include({ workflow_id: wf, runs: 1, failure_rate: 0 });
      expect(k.kernels.map((x: { kernel: string }) => x.kernel)).to.deep.equal(['analytics']);
      expect((await post(`/enterprise/processes/${processId}/execute`, {}, other)).status).to.equal(404);
      expect((await post(`/enterprise/processes/${processId}/execute`, {}, viewer)).status).to.equal(403);
      expect((await post('/enterprise/processes/nope/execute', {})).status).to.equal(422);
    });

    it('memory objects: stored with tags, searched by text and tag, tenant-scoped', async () => {
      const a = await post('/enterprise/memory/objects', { kind: 'fact', title: 'Invoice cut-off', content: 'Invoices close on the 25th (100% of them).', tags: ['Finance', 'billing'] });
      expect(a.status).to.equal(201);
      expect(a.body.tags).to.deep.equal(['billing', 'finance']);
      await post('/enterprise/memory/objects', { kind: 'document', title: 'Runbook', content: 'Restart the trading node.', tags: ['ops'] });
      expect((await get('/enterprise/memory/objects?q=CUT-OFF')).body.objects.map((o: { id: string }) => o.id)).to.deep.equal([a.body.id]);
      expect((await get('/enterprise/memory/objects?q=100%25')).body.objects.map((o: { id: string }) => o.id)).to.deep.equal([a.body.id]);
      expect((await get('/enterprise/memory/objects?tag=fin')).body.objects).to.deep.equal([]);
      expect((await get('/enterprise/memory/objects?tag=finance')).body.objects).to.have.length(1);
      expect((await get('/enterprise/memory/objects?kind=document')).body.objects[0].title).to.equal('Runbook');
      expect((await get('/enterprise/memory/objects', other)).body.objects).to.deep.equal([]);
      expect((await post('/enterprise/memory/objects', { kind: 'fact', title: 't', content: 'c', tags: ['bad tag'] })).status).to.equal(422);
      expect((await post('/enterprise/memory/objects', { kind: 'fact', title: 't', content: 'c' }, viewer)).status).to.equal(403);
      expect((await get('/enterprise/memory/objects?kind=video')).status).to.equal(422);
      expect((await get('/enterprise/memory/objects', null)).status).to.equal(401);
    });
  });

  describe('KPIs', () => {
    it('GET /enterprise/kpi/summary and by_department', async () => {
      const r = await get('/enterprise/kpi/summary?window_seconds=3600');
      expect(r.status).to.equal(200);
      expect(r.body.departments).to.deep.equal(['finance']);
      expect(r.body.tenant).to.include({ workflow_runs: 1, workflow_failure_rate: 0, open_incidents: 0, cost_usd: 0 });
      const trading = r.body.kernels.find((k: { kernel: string }) => k.kernel === 'trading');
      expect(trading.tasks).to.equal(60);
      expect(trading.error_rate).to.equal(0.1);
      const empty = await get('/enterprise/kpi/summary', other);
      expect(empty.body.processes).to.include({ processes: 0, runs: 0, sla_met_rate: null });
      expect((await get('/enterprise/kpi/summary?window_seconds=1')).status).to.equal(422);
      expect((await get('/enterprise/kpi/summary', null)).status).to.equal(401);
      expect((await get('/enterprise/kpi/by_department/marketing')).status).to.equal(404);
      expect((await get('/enterprise/kpi/by_department/finance', other)).status).to.equal(404);
      expect((await get('/enterprise/kpi/by_department/Bad%20Name')).status).to.equal(422);
    });
  });

  describe('revenue', () => {
    const prices = Array.from({ length: 120 }, (_, i) => 100 + i * 0.5 + 5 * Math.sin(i / 3));
    it('optimises trading strategies on the trading kernel and ranks them by Sharpe ratio', async () => {
      expect((await get('/enterprise/revenue/strategies')).body.strategies.map((s: { latest: unknown }) => s.latest)).to.deep.equal([null, null, null, null]);
      const r = await post('/enterprise/revenue/optimize/trading', { prices, cost_bps: 5 });
      expect(r.status).to.equal(202);
      const done = await settled(t, viewer, `/enterprise/revenue/optimizations/${r.body.id}`);
      expect(done.state, done.error).to.equal('succeeded');
      const ranking = done.result.ranking as Array<{ rank: number; sharpe: number | null; strategy: string }>;
      expect(ranking).to.have.length(9);
      expect(ranking.map((x) => x.rank)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      const sharpes = ranking.map((x) => x.sharpe ?? -Infinity);
      expect([...sharpes].sort((a, b) => b - a)).to.deep.equal(sharpes);
      const s = await get('/enterprise/revenue/strategies');
      expect(s.body.optimization_id).to.equal(r.body.id);
      expect(s.body.strategies.find((x: { name: string }) => x.name === 'buy_and_hold').latest.strategy).to.equal('buy_and_hold');
      expect((await get('/enterprise/revenue/strategies', other)).body.optimization_id).to.equal(null);
    });

    it('reads a stored dataset; refuses bad input and other tenants', async () => {
      const m = await post('/enterprise/memory/objects', { kind: 'document', title: 'prices', content: JSON.stringify({ prices }), tags: ['market_data'] });
      const r = await post('/enterprise/revenue/optimize/trading', { dataset_id: m.body.id, strategies: [{ name: 'momentum', lookback: 5 }] });
      expect(r.status).to.equal(202);
      expect((await settled(t, viewer, `/enterprise/revenue/optimizations/${r.body.id}`)).result.ranking).to.have.length(1);
      expect((await post('/enterprise/revenue/optimize/trading', { dataset_id: m.body.id }, other)).status).to.equal(404);
      const text = await post('/enterprise/memory/objects', { kind: 'fact', title: 'not prices', content: 'hello' });
      expect((await post('/enterprise/revenue/optimize/trading', { dataset_id: text.body.id })).status).to.equal(422);
      expect((await post('/enterprise/revenue/optimize/trading', {})).status).to.equal(422);
      expect((await post('/enterprise/revenue/optimize/trading', { prices, dataset_id: m.body.id })).status).to.equal(422);
      expect((await post('/enterprise/revenue/optimize/trading', { prices, strategies: [{ name: 'momentum' }] })).status).to.equal(422);
      expect((await post('/enterprise/revenue/optimize/trading', { prices }, viewer)).status).to.equal(403);
      expect((await get(`/enterprise/revenue/optimizations/${r.body.id}`, other)).status).to.equal(404);
      expect((await get('/enterprise/revenue/strategies', null)).status).to.equal(401);
    });
  });

  describe('governance and human-AI', () => {
    let approvalId: string;
    it('governance/execute: outside the change window a change waits for approval; a policy block is 403', async () => {
      expect((await post('/mesh/nodes', { kernel_id: 'analytics' }, operator)).status).to.equal(201);
      const r = await post('/enterprise/governance/execute', { kind: 'pause_node', target: 'analytics-1', reason: 'maintenance' }, operator);
      expect(r.status).to.equal(200);
      expect(r.body.status).to.equal('pending_approval');
      expect(r.body.verdict.rules.find((x: { rule: string }) => x.rule === 'change_window').outcome).to.equal('require_approval');
      approvalId = r.body.approval.id;
      expect((await get('/mesh/nodes/analytics-1')).body.state).to.equal('active');
      const role = await post('/enterprise/governance/execute', { kind: 'pause_node', target: 'analytics-1' }, member);
      expect(role.status).to.equal(403);
      expect(role.body.code).to.equal('POLICY_BLOCKED');
      expect(role.body.verdict.rules.find((x: { rule: string }) => x.rule === 'role').outcome).to.equal('block');
      expect((await post('/enterprise/governance/execute', { kind: 'launch', target: 'x' }, operator)).body.code).to.equal('POLICY_BLOCKED');
      expect((await post('/enterprise/governance/execute', { kind: 'pause_node', target: 'nowhere-1' }, operator)).status).to.equal(404);
      expect((await post('/enterprise/governance/execute', { kind: 'pause_node' }, operator)).status).to.equal(422);
      expect((await post('/enterprise/governance/execute', { kind: 'pause_node', target: 'analytics-1' }, viewer)).status).to.equal(403);
      expect((await post('/enterprise/governance/execute', { kind: 'pause_node', target: 'analytics-1' }, null)).status).to.equal(401);
    });

    it('human-ai approvals: pending list, approve (not by the requester), 409 once decided', async () => {
      const p = await get('/enterprise/human-ai/approvals/pending');
      expect(p.status).to.equal(200);
      expect(p.body.approvals.map((a: { id: string }) => a.id)).to.include(approvalId);
      expect((await get('/enterprise/human-ai/approvals/pending', other)).body.approvals).to.deep.equal([]);
      expect((await get('/enterprise/human-ai/approvals/pending', null)).status).to.equal(401);
      expect((await post(`/enterprise/human-ai/approvals/${approvalId}/approve`, {}, operator)).status).to.equal(403);
      expect((await post(`/enterprise/human-ai/approvals/${approvalId}/approve`, {}, other)).status).to.equal(404);
      const a = await post(`/enterprise/human-ai/approvals/${approvalId}/approve`, { comment: 'ok' }, operator2);
      expect(a.status).to.equal(200);
      expect(a.body.state).to.equal('executed');
      expect((await get('/mesh/nodes/analytics-1')).body.state).to.equal('paused');
      expect((await post(`/enterprise/human-ai/approvals/${approvalId}/approve`, {}, operator2)).status).to.equal(409);
      expect((await post('/enterprise/human-ai/approvals/nope/approve', {}, operator2)).status).to.equal(422);
    });

    it('a pending request expires after governance.approvalTtlSeconds; an expired one cannot be approved', async () => {
      const r = await post('/enterprise/governance/execute', { kind: 'resume_node', target: 'analytics-1' }, operator);
      expect(r.body.status).to.equal('pending_approval');
      const id = r.body.approval.id;
      expect(Date.parse(r.body.approval.expires_at) - Date.parse(r.body.approval.created_at)).to.equal(600_000);
      clock.offset = 601_000;
      try {
        expect((await get(`/agi/approvals/${id}`)).body.state).to.equal('expired');
        expect((await get('/enterprise/human-ai/approvals/pending')).body.approvals.map((a: { id: string }) => a.id)).to.not.include(id);
        const late = await post(`/enterprise/human-ai/approvals/${id}/approve`, {}, operator2);
        expect(late.status).to.equal(409);
        expect(late.body).to.include({ code: 'INVALID_STATE', state: 'expired' });
        expect((await get('/mesh/nodes/analytics-1')).body.state).to.equal('paused');
      } finally {
        clock.offset = 0;
      }
    });

    it('human-ai feedback rates a decision', async () => {
      const a = await post('/enterprise/human-ai/feedback', { subject_type: 'approval', subject_id: approvalId, rating: 5 });
      expect(a.status).to.equal(201);
      expect(a.body.subject_feedback).to.deep.equal({ count: 1, mean_rating: 5 });
      const b = await post('/enterprise/human-ai/feedback', { subject_type: 'approval', subject_id: approvalId, rating: 3, comment: 'slow' });
      expect(b.body.subject_feedback).to.deep.equal({ count: 2, mean_rating: 4 });
      expect((await post('/enterprise/human-ai/feedback', { subject_type: 'insight_chain', subject_id: MISSING, rating: 3 })).status).to.equal(404);
      expect((await post('/enterprise/human-ai/feedback', { subject_type: 'approval', subject_id: approvalId, rating: 3 }, other)).status).to.equal(404);
      expect((await post('/enterprise/human-ai/feedback', { subject_type: 'approval', subject_id: approvalId, rating: 6 })).status).to.equal(422);
      expect((await post('/enterprise/human-ai/feedback', { subject_type: 'approval', subject_id: approvalId, rating: 3 }, viewer)).status).to.equal(403);
    });

    it('governance/audit_logs: the tenant\'s actions, filtered; platform actions for operators', async () => {
      const r = await get('/enterprise/governance/audit_logs?action=create_process');
      expect(r.status).to.equal(200);
      expect(r.body.audit_logs).to.have.length(1);
      expect(r.body.audit_logs[0]).to.include({ action: 'create_process', tenant_id: 'platform' });
      const ops = await get('/enterprise/governance/audit_logs?action=pause_node', operator);
      expect(ops.body.audit_logs[0]).to.include({ action: 'pause_node', target_id: 'analytics-1' });
      expect((await get('/enterprise/governance/audit_logs?action=pause_node', viewer)).body.audit_logs).to.deep.equal([]);
      expect((await get('/enterprise/governance/audit_logs', other)).body.audit_logs.every((x: { tenant_id: string }) => x.tenant_id === 'acme')).to.equal(true);
      const page = await get('/enterprise/governance/audit_logs?limit=1');
      expect(page.body.next_cursor).to.be.a('string');
      expect((await get('/enterprise/governance/audit_logs?cursor=@@')).status).to.equal(422);
      expect((await get('/enterprise/governance/audit_logs?since=yesterday')).status).to.equal(422);
      expect((await get('/enterprise/governance/audit_logs', null)).status).to.equal(401);
    });
  });

  describe('digital twin and resources', () => {
    it('digital-twin/state models each kernel from its outcomes', async () => {
      const r = await get('/enterprise/digital-twin/state?window_seconds=3600');
      expect(r.status).to.equal(200);
      const k = r.body.kernels.find((x: { kernel: string }) => x.kernel === 'trading');
      // The 60 seeded outcomes and the backtests the revenue tests ran.
      expect(k.tasks).to.be.within(60, 63);
      expect(k).to.include({ threads: 1, active_nodes: 1 });
      expect(k.arrival_per_s).to.be.closeTo(k.tasks / 3600, 1e-9);
      expect(k.utilisation).to.be.closeTo((k.arrival_per_s * k.mean_service_ms) / 1000 / k.threads, 1e-9);
      expect((await get('/enterprise/digital-twin/state?window_seconds=5')).status).to.equal(422);
      expect((await get('/enterprise/digital-twin/state', null)).status).to.equal(401);
    });

    it('digital-twin/predict/kpi forecasts with a back-tested error and applies a change', async () => {
      const body = { kernel: 'trading', kpi: 'load_per_bucket', window_seconds: 3600, bucket_seconds: 300, horizon_buckets: 4 };
      const base = await post('/enterprise/digital-twin/predict/kpi', body, viewer);
      expect(base.status).to.equal(200);
      expect(base.body.history).to.have.length(12);
      expect(base.body.baseline_forecast).to.have.length(4);
      expect(base.body.backtest.holdout_points).to.equal(3);
      const doubled = await post('/enterprise/digital-twin/predict/kpi', { ...body, change: { load_factor: 2 } }, viewer);
      expect(doubled.body.forecast).to.deep.equal(base.body.baseline_forecast.map((x: number) => x * 2));
      const latency = await post('/enterprise/digital-twin/predict/kpi', { ...body, kpi: 'latency_p95_ms', change: { nodes_delta: 1 } }, viewer);
      expect(latency.body.utilisation_after).to.be.lessThan(latency.body.utilisation_now);
      expect(latency.body.forecast[0]).to.be.lessThan(latency.body.baseline_forecast[0]);
      const none = await post('/enterprise/digital-twin/predict/kpi', { ...body, kernel: 'analytics', kpi: 'latency_p95_ms' }, viewer);
      expect(none.status).to.equal(409);
      expect(none.body.code).to.equal('INSUFFICIENT_DATA');
      expect((await post('/enterprise/digital-twin/predict/kpi', { ...body, kernel: 'nope' }, viewer)).status).to.equal(422);
      expect((await post('/enterprise/digital-twin/predict/kpi', { ...body, kpi: 'mood' }, viewer)).status).to.equal(422);
      expect((await post('/enterprise/digital-twin/predict/kpi', body, null)).status).to.equal(401);
    });

    it('digital-twin/interventions recommends a node where utilisation is high', async () => {
      const r = await get('/enterprise/digital-twin/interventions');
      expect(r.status).to.equal(200);
      const i = r.body.interventions.find((x: { kernel: string }) => x.kernel === 'trading');
      expect(i.action).to.equal('add_node');
      expect(i.utilisation_after).to.be.closeTo(i.utilisation_now / 2, 1e-3);
      expect(r.body.interventions.find((x: { kernel: string }) => x.kernel === 'analytics')).to.equal(undefined);
      expect((await get('/enterprise/digital-twin/interventions?high=2')).status).to.equal(422);
    });

    it('resources/plan_scaling plans from forecast load; applying goes through governance', async () => {
      const plan = await post('/enterprise/resources/plan_scaling', { target_utilisation: 0.5, window_seconds: 3600, bucket_seconds: 300 });
      expect(plan.status).to.equal(201);
      const trading = plan.body.decisions.find((d: { kernel_id: string }) => d.kernel_id === 'trading');
      expect(trading.state).to.equal('planned');
      expect(trading.recommended_nodes).to.be.greaterThan(trading.current_nodes);
      expect(plan.body.decisions.find((d: { kernel_id: string }) => d.kernel_id === 'analytics').state).to.equal('insufficient_data');
      const applied = await post('/enterprise/resources/plan_scaling', { target_utilisation: 0.5, window_seconds: 3600, apply: true }, operator);
      const d = applied.body.decisions.find((x: { kernel_id: string }) => x.kernel_id === 'trading');
      expect(d.state).to.equal('pending_approval');
      expect((await get(`/agi/approvals/${d.approval_id}`)).body.action).to.deep.include({ kind: 'add_node', target: 'trading' });
      const blocked = await post('/enterprise/resources/plan_scaling', { target_utilisation: 0.5, window_seconds: 3600, apply: true }, member);
      expect(blocked.body.decisions.find((x: { kernel_id: string }) => x.kernel_id === 'trading').state).to.equal('blocked');
      expect((await post('/enterprise/resources/plan_scaling', { target_utilisation: 2 })).status).to.equal(422);
      expect((await post('/enterprise/resources/plan_scaling', {}, viewer)).status).to.equal(403);
      const list = await get('/enterprise/resources/scaling_decisions?kernel_id=trading');
      expect(list.status).to.equal(200);
      expect(list.body.scaling_decisions.map((x: { state: string }) => x.state)).to.deep.equal(['blocked', 'pending_approval', 'planned']);
      expect((await get('/enterprise/resources/scaling_decisions', other)).body.scaling_decisions).to.deep.equal([]);
      expect((await get('/enterprise/resources/scaling_decisions?limit=0')).status).to.equal(422);
      expect((await get('/enterprise/resources/scaling_decisions', null)).status).to.equal(401);
    });
  });
});
