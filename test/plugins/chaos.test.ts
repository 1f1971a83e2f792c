import crypto from 'node:crypto';
import { expect } from 'chai';
import { builtinId, seedBuiltins } from '../../plugins/chaos/engine/scenarios';
import { eachDatabase, type TestHost } from '../helpers/host';
import { startChaosHost } from './chaos-helpers';
import { openStream } from '../core/mesh-helpers';
import { eventually } from '../helpers/eventually';

const R = '/ops/resilience';

eachDatabase('chaos plugin (/ops/resilience, /chaos/validate_production)', (db) => {
  let t: TestHost;
  let viewer: string;
  let member: string;
  let operator: string;
  let otherViewer: string;
  before(async () => {
    t = await startChaosHost(db);
    viewer = (await t.userToken('viewer')).token;
    member = (await t.userToken('member')).token;
    operator = (await t.userToken('operator')).token;
    otherViewer = (await t.userToken('viewer', 'other-tenant')).token;
    await eventually(() => t.host.services.mesh.nodes().every((n) => n.health === 'healthy'), 8000, 'healthy nodes');
  });
  after(() => t.stop());

  const scenarioBody = (over: Record<string, unknown> = {}) => ({
    name: 'probe latency',
    injection_type: 'latency',
    target_domains: ['probe'],
    parameters: { latency_ms: 30 },
    duration_seconds: 1,
    hypothesis: { min_success_ratio: 0.9, max_latency_p99_ms: 1000 },
    ...over,
  });
  const poll = async (id: string, token = operator) =>
    (await eventually(async () => {
      const r = await t.request('GET', `${R}/experiments/${id}`, { token });
      return r.body.status !== 'running' ? r.body : null;
    }, 15_000, 'experiment end'))!;

  it('seeds the built-in scenarios once, with stable ids, targeting the kernels of the mesh', async () => {
    const r = await t.request('GET', `${R}/scenarios`, { token: viewer });
    expect(r.status).to.equal(200);
    const builtins = r.body.scenarios.filter((s: any) => s.builtin);
    expect(builtins.map((s: any) => s.injection_type).sort()).to.deep.equal(['cpu_stress', 'error', 'latency', 'node_pause', 'worker_crash']);
    expect(builtins.find((s: any) => s.injection_type === 'latency').scenario_id).to.equal(builtinId('latency'));
    expect(builtins[0].target_domains).to.deep.equal(['probe', 'textstats']);
    expect(builtins[0]).to.include.keys('scenario_id', 'name', 'injection_type', 'target_domains', 'parameters', 'duration_seconds', 'hypothesis');
    await seedBuiltins(t.host.services.db, ['probe', 'textstats']);
    const again = await t.request('GET', `${R}/scenarios?limit=500`, { token: viewer });
    expect(again.body.scenarios.filter((s: any) => s.builtin)).to.have.length(5);
    const one = await t.request('GET', `${R}/scenarios/${builtinId('error')}`, { token: otherViewer });
    expect(one.status).to.equal(200);
    expect(one.body.parameters).to.deep.equal({ error_rate: 0.2, node_share: 0.5 });
  });

  it('lists with pagination and filters; 401 without a token; 422 for bad queries', async () => {
    const a = await t.request('GET', `${R}/scenarios?limit=2`, { token: viewer });
    expect(a.body.scenarios).to.have.length(2);
    const b = await t.request('GET', `${R}/scenarios?limit=2&cursor=${a.body.next_cursor}`, { token: viewer });
    expect(b.body.scenarios[0].scenario_id).to.not.equal(a.body.scenarios[1].scenario_id);
    const f = await t.request('GET', `${R}/scenarios?injection_type=node_pause`, { token: viewer });
    expect(f.body.scenarios.map((s: any) => s.injection_type)).to.deep.equal(['node_pause']);
    expect((await t.request('GET', `${R}/scenarios`, { token: null })).status).to.equal(401);
    expect((await t.request('GET', `${R}/scenarios?limit=0`, { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', `${R}/scenarios?cursor=nope`, { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', `${R}/scenarios?injection_type=flood`, { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', `${R}/scenarios/not-a-uuid`, { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', `${R}/scenarios/${crypto.randomUUID()}`, { token: viewer })).status).to.equal(404);
    expect((await t.request('GET', `${R}/scenarios/${builtinId('latency')}`, { token: null })).status).to.equal(401);
  });

  it('creates a scenario (operator, 201) in the caller\'s tenant; 422 for unknown types, bad parameters, unknown domains', async () => {
    const r = await t.request('POST', `${R}/scenarios`, { token: operator, body: scenarioBody({ parameters: { latency_ms: 30, jitter_ms: 5 } }) });
    expect(r.status).to.equal(201);
    expect(r.body).to.include({ name: 'probe latency', injection_type: 'latency', builtin: false, tenant_id: 'platform', duration_seconds: 1 });
    expect(r.body.parameters).to.deep.equal({ latency_ms: 30, jitter_ms: 5, task_share: 1, node_share: 1 });
    expect((await t.request('GET', `${R}/scenarios/${r.body.scenario_id}`, { token: viewer })).status).to.equal(200);
    expect((await t.request('GET', `${R}/scenarios/${r.body.scenario_id}`, { token: otherViewer })).status).to.equal(404);
    expect((await t.request('POST', `${R}/scenarios`, { token: null, body: scenarioBody() })).status).to.equal(401);
    expect((await t.request('POST', `${R}/scenarios`, { token: viewer, body: scenarioBody() })).status).to.equal(403);
    expect((await t.request('POST', `${R}/scenarios`, { token: member, body: scenarioBody() })).status).to.equal(403);
    const unknown = await t.request('POST', `${R}/scenarios`, { token: operator, body: scenarioBody({ injection_type: 'flood' }) });
    expect(unknown.status).to.equal(422);
    expect(unknown.body.detail[0].loc).to.deep.equal(['body', 'injection_type']);
    const missing = await t.request('POST', `${R}/scenarios`, { token: operator, body: scenarioBody({ parameters: {} }) });
    expect(missing.status).to.equal(422);
    expect(missing.body.detail[0].loc).to.deep.equal(['body', 'parameters', 'latency_ms']);
    const typo = await t.request('POST', `${R}/scenarios`, { token: operator, body: scenarioBody({ parameters: { latency_ms: 10, latencyMs: 10 } }) });
    expect(typo.status).to.equal(422);
    for (const [type, parameters] of [['error', { error_rate: 2 }], ['cpu_stress', { cpu_share: 1 }], ['worker_crash', { interval_ms: 1 }], ['node_pause', { node_share: 0 }]] as const) {
      expect((await t.request('POST', `${R}/scenarios`, { token: operator, body: scenarioBody({ injection_type: type, parameters }) })).status).to.equal(422);
    }
    expect((await t.request('POST', `${R}/scenarios`, { token: operator, body: scenarioBody({ target_domains: ['nope'] }) })).status).to.equal(422);
    expect((await t.request('POST', `${R}/scenarios`, { token: operator, body: scenarioBody({ duration_seconds: 0 }) })).status).to.equal(422);
    expect((await t.request('POST', `${R}/scenarios`, { token: operator, body: scenarioBody({ target_domains: [] }) })).status).to.equal(422);
    const after = await t.request('GET', `${R}/scenarios?limit=500`, { token: viewer });
    expect(after.body.scenarios.filter((s: any) => !s.builtin)).to.have.length(1);
  });

  it('runs a scenario (202): journal, hub events, actions history; 409 on overlap; 404, 403, 401, 422', async () => {
    const s = (await t.request('POST', `${R}/scenarios`, { token: operator, body: scenarioBody({ name: 'run me' }) })).body;
    let run_id = '';
    const stream = await openStream(t, viewer);
    try {
      expect((await t.request('POST', `${R}/scenarios/${s.scenario_id}/run`, { token: viewer })).status).to.equal(403);
      expect((await t.request('POST', `${R}/scenarios/${s.scenario_id}/run`, { token: null })).status).to.equal(401);
      expect((await t.request('POST', `${R}/scenarios/${crypto.randomUUID()}/run`, { token: operator })).status).to.equal(404);
      expect((await t.request('POST', `${R}/scenarios/bad/run`, { token: operator })).status).to.equal(422);
      const run = await t.request('POST', `${R}/scenarios/${s.scenario_id}/run`, { token: operator });
      expect(run.status).to.equal(202);
      run_id = run.body.experiment_id;
      expect(run.body).to.include({ status: 'running', scenario_id: s.scenario_id, injection_type: 'latency', kind: 'scenario' });
      const again = await t.request('POST', `${R}/scenarios/${builtinId('latency')}/run`, { token: operator });
      expect(again.status).to.equal(409);
      expect(again.body.detail).to.match(/Domain probe is already under a running chaos experiment/);
      const e = await poll(run.body.experiment_id);
      expect(e).to.include({ status: 'completed', deviated: false });
      expect(e.steady_state.before.held && e.steady_state.during.held && e.steady_state.after.held).to.equal(true);
      expect(e.steady_state.during.domains.probe.latency_p50_ms).to.be.at.least(30);
      await stream.next((m) => m.type === 'chaos_experiment' && m.data.experiment_id === e.experiment_id && m.data.phase === 'started');
      const end = await stream.next((m) => m.type === 'chaos_experiment' && m.data.experiment_id === e.experiment_id && m.data.phase === 'ended');
      expect(end.data).to.include({ status: 'completed', deviated: false, tenant_id: 'platform' });
    } finally {
      await stream.close();
    }
    // The end is recorded after the hub event that announces it: wait for its record.
    const mine = await eventually(async () => {
      const acts = await t.host.services.actions.list({ limit: 100, target_type: 'chaos_experiment' });
      const rows = acts.actions.filter((a) => a.target_id === run_id);
      return rows.some((a) => a.action === 'chaos_experiment_ended') ? rows : null;
    }, 10_000, 'the experiment end in the actions history');
    expect(mine.map((a) => `${a.source}:${a.action}`)).to.include.members(['manual:run_chaos_experiment', 'automated:chaos_experiment_started', 'automated:chaos_experiment_ended']);
    expect(mine.filter((a) => a.source === 'automated').every((a) => a.actor === 'chaos' && a.cause === run_id)).to.equal(true);
    const direct = await t.host.services.actions.list({ limit: 100, action: 'run_chaos_experiment' });
    expect(direct.actions[0]).to.include({ source: 'manual', target_type: 'chaos_experiment' });
  });

  it('lists experiments newest first with pagination and filters; one experiment; 404 across tenants', async () => {
    const all = await t.request('GET', `${R}/experiments`, { token: viewer });
    expect(all.status).to.equal(200);
    expect(all.body.experiments.length).to.be.at.least(1);
    const s = (await t.request('POST', `${R}/scenarios`, { token: operator, body: scenarioBody({ name: 'second', parameters: { latency_ms: 5 } }) })).body;
    const run = await t.request('POST', `${R}/scenarios/${s.scenario_id}/run`, { token: operator });
    await poll(run.body.experiment_id);
    const first = await t.request('GET', `${R}/experiments?limit=1`, { token: viewer });
    expect(first.body.experiments[0].experiment_id).to.equal(run.body.experiment_id);
    const second = await t.request('GET', `${R}/experiments?limit=1&cursor=${first.body.next_cursor}`, { token: viewer });
    expect(second.body.experiments[0].experiment_id).to.not.equal(run.body.experiment_id);
    expect((await t.request('GET', `${R}/experiments?status=completed&domain=probe`, { token: viewer })).body.experiments.length).to.be.at.least(2);
    expect((await t.request('GET', `${R}/experiments?status=aborted`, { token: viewer })).body.experiments).to.have.length(0);
    expect((await t.request('GET', `${R}/experiments?status=weird`, { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', `${R}/experiments?cursor=zz`, { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', `${R}/experiments`, { token: null })).status).to.equal(401);
    expect((await t.request('GET', `${R}/experiments`, { token: otherViewer })).body.experiments).to.have.length(0);
    expect((await t.request('GET', `${R}/experiments/${run.body.experiment_id}`, { token: otherViewer })).status).to.equal(404);
    expect((await t.request('GET', `${R}/experiments/${crypto.randomUUID()}`, { token: viewer })).status).to.equal(404);
    expect((await t.request('GET', `${R}/experiments/nope`, { token: viewer })).status).to.equal(422);
  });

  it('aborts a running experiment (operator); 409 when it is not running; 404, 403, 401, 422', async () => {
    const s = (await t.request('POST', `${R}/scenarios`, { token: operator, body: scenarioBody({ name: 'long', duration_seconds: 60 }) })).body;
    const run = await t.request('POST', `${R}/scenarios/${s.scenario_id}/run`, { token: operator });
    const id = run.body.experiment_id;
    await eventually(async () => (await t.request('GET', `${R}/experiments/${id}`, { token: viewer })).body.injected_at, 5000, 'injected');
    expect(t.host.services.mesh.node('probe-1').control).to.deep.include({ latency_ms: 30 });
    expect((await t.request('POST', `${R}/experiments/${id}/abort`, { token: viewer })).status).to.equal(403);
    expect((await t.request('POST', `${R}/experiments/${id}/abort`, { token: null })).status).to.equal(401);
    expect((await t.request('POST', `${R}/experiments/${crypto.randomUUID()}/abort`, { token: operator })).status).to.equal(404);
    expect((await t.request('POST', `${R}/experiments/x/abort`, { token: operator })).status).to.equal(422);
    const a = await t.request('POST', `${R}/experiments/${id}/abort`, { token: operator });
    expect(a.status).to.equal(200);
    expect(a.body.status).to.equal('aborted');
    expect(a.body.injections.every((i: any) => i.rolled_back_at)).to.equal(true);
    expect(t.host.services.mesh.nodes().every((n) => n.control === null)).to.equal(true);
    const twice = await t.request('POST', `${R}/experiments/${id}/abort`, { token: operator });
    expect(twice.status).to.equal(409);
    expect(twice.body.detail).to.match(/is aborted, not running/);
    const acts = await t.host.services.actions.list({ limit: 10, action: 'abort_chaos_experiment' });
    expect(acts.actions[0]).to.include({ source: 'manual', target_id: id });
  });

  it('halts every running experiment at once (operator only)', async () => {
    const p = (await t.request('POST', `${R}/scenarios`, { token: operator, body: scenarioBody({ name: 'p', injection_type: 'error', parameters: { error_rate: 0.5 }, duration_seconds: 60, hypothesis: { min_success_ratio: 0, max_latency_p99_ms: 5000 } }) })).body;
    const x = (await t.request('POST', `${R}/scenarios`, { token: operator, body: scenarioBody({ name: 'x', target_domains: ['textstats'], injection_type: 'node_pause', parameters: { node_share: 1 }, duration_seconds: 60 }) })).body;
    const a = (await t.request('POST', `${R}/scenarios/${p.scenario_id}/run`, { token: operator })).body.experiment_id;
    const b = (await t.request('POST', `${R}/scenarios/${x.scenario_id}/run`, { token: operator })).body.experiment_id;
    // Every injection applied (both probe nodes' faults and the pause) before the halt counts them.
    await eventually(() => t.host.services.mesh.node('textstats-1').state === 'paused' && t.host.services.mesh.nodes().filter((n) => n.control).length === 2, 5000, 'both injected');
    expect((await t.request('POST', `${R}/halt`, { token: viewer })).status).to.equal(403);
    expect((await t.request('POST', `${R}/halt`, { token: null })).status).to.equal(401);
    const h = await t.request('POST', `${R}/halt`, { token: operator });
    expect(h.status).to.equal(200);
    expect(h.body.halted.sort()).to.deep.equal([a, b].sort());
    expect(h.body.injections_removed).to.be.at.least(3);
    expect(t.host.services.mesh.nodes().every((n) => n.control === null && n.state === 'active')).to.equal(true);
    for (const id of [a, b]) expect((await t.request('GET', `${R}/experiments/${id}`, { token: viewer })).body.status).to.equal('aborted');
    const idle = await t.request('POST', `${R}/halt`, { token: operator });
    expect(idle.body).to.deep.equal({ halted: [], halted_total: 0, injections_removed: 0 });
  });

  it('answers 409 when a target kernel has no node the fault can act on', async () => {
    const x = (await t.request('POST', `${R}/scenarios`, { token: operator, body: scenarioBody({ name: 'pause textstats', target_domains: ['textstats'], injection_type: 'node_pause', parameters: {} }) })).body;
    await t.host.services.mesh.pauseNode('textstats-1', { source: 'manual', actor: 'test' });
    try {
      const r = await t.request('POST', `${R}/scenarios/${x.scenario_id}/run`, { token: operator });
      expect(r.status).to.equal(409);
      expect(r.body.detail).to.match(/Kernel textstats has no node the node_pause fault can act on \(nodes: textstats-1 paused\)/);
    } finally {
      await t.host.services.mesh.resumeNode('textstats-1', { source: 'manual', actor: 'test' });
    }
  });

  it('reports per domain and overall; 401 and 422', async () => {
    const r = await t.request('GET', `${R}/report`, { token: viewer });
    expect(r.status).to.equal(200);
    expect(r.body.overall).to.include({ experiments_run: 5, completed: 2, passed: 2, deviated: 0, aborted: 3, resilience_score: 100 });
    expect(r.body.overall.mean_time_to_recover_ms).to.be.a('number');
    const probe = r.body.domains.find((d: any) => d.domain === 'probe');
    expect(probe).to.include({ experiments_run: 4, passed: 2 });
    expect(r.body.domains.find((d: any) => d.domain === 'textstats')).to.include({ experiments_run: 1, aborted: 1, resilience_score: null });
    expect(r.body.formula).to.match(/resilience_score = 100/);
    const later = await t.request('GET', `${R}/report?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`, { token: viewer });
    expect(later.body.overall.experiments_run).to.equal(0);
    expect((await t.request('GET', `${R}/report`, { token: otherViewer })).body.overall.experiments_run).to.equal(0);
    expect((await t.request('GET', `${R}/report`, { token: null })).status).to.equal(401);
    expect((await t.request('GET', `${R}/report?since=yesterday`, { token: viewer })).status).to.equal(422);
  });

  it('validates production with a small latency experiment per domain; 404, 409, 422, 403, 401', async () => {
    expect((await t.request('POST', '/chaos/validate_production', { token: member, body: {} })).status).to.equal(403);
    expect((await t.request('POST', '/chaos/validate_production', { token: null, body: {} })).status).to.equal(401);
    expect((await t.request('POST', '/chaos/validate_production', { token: operator, body: { domains: ['nope'] } })).status).to.equal(404);
    expect((await t.request('POST', '/chaos/validate_production', { token: operator, body: { latency_ms: 0 } })).status).to.equal(422);
    expect((await t.request('POST', '/chaos/validate_production', { token: operator, body: { domains: 'probe' } })).status).to.equal(422);
    const r = await t.request('POST', '/chaos/validate_production', { token: operator });
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ verdict: 'passed', ready: true });
    expect(r.body.domains.map((d: any) => [d.domain, d.outcome])).to.deep.equal([['probe', 'passed'], ['textstats', 'passed']]);
    expect(r.body.experiments).to.have.length(2);
    for (const e of r.body.experiments) {
      expect(e).to.include({ kind: 'validation', injection_type: 'latency', status: 'completed', duration_seconds: 1 });
      expect(e.injections).to.have.length(1);
    }
    // One validation at a time on a domain: a running experiment there is 409.
    const s = (await t.request('POST', `${R}/scenarios`, { token: operator, body: scenarioBody({ name: 'blocker', duration_seconds: 60 }) })).body;
    const run = await t.request('POST', `${R}/scenarios/${s.scenario_id}/run`, { token: operator });
    const busy = await t.request('POST', '/chaos/validate_production', { token: operator, body: { domains: ['probe'] } });
    expect(busy.status).to.equal(409);
    await t.request('POST', `${R}/experiments/${run.body.experiment_id}/abort`, { token: operator });
  });
});
