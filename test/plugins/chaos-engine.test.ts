import { chaosEngineRef } from '../../plugins/chaos/engine/service';
import { expect } from 'chai';
import { eachDatabase, type TestHost } from '../helpers/host';
import { def, ended, phase, startChaosHost } from './chaos-helpers';
import { sleep, until } from '../core/mesh-helpers';

const caller = { id: 'chaos-test-user', tenantId: 'platform' };

eachDatabase('chaos engine: injections act on real workers', (db) => {
  let t: TestHost;
  const events: Array<{ experiment_id: string; phase: string }> = [];
  before(async () => {
    t = await startChaosHost(db);
    t.host.services.events.subscribe('chaos_experiment', (e) => events.push(e.data as { experiment_id: string; phase: string }));
    await until(() => t.host.services.mesh.nodes().every((n) => n.health === 'healthy'), 8000, 'healthy nodes');
  });
  after(() => t.stop());

  const mesh = () => t.host.services.mesh;

  it('latency: pings and probes slow down during the injection; rollback restores them', async () => {
    // Margins are wide: the suite shares a loaded machine.
    const before = await t.request('GET', '/kernels/probe/ping');
    expect(before.body.status, before.body.reason).to.equal('ok');
    const exp = await t.host.service(chaosEngineRef).run(def({ injection_type: 'latency', parameters: { latency_ms: 400, jitter_ms: 20, task_share: 1, node_share: 1 }, duration_seconds: 1, hypothesis: { description: 'fast', min_success_ratio: 0.9, max_latency_p99_ms: 300 } }), caller);
    expect(exp.status).to.equal('running');
    await phase(t, exp.experiment_id, 'injected');
    expect(mesh().node('probe-1').control).to.deep.include({ latency_ms: 400, latency_jitter_ms: 20 });
    const slow = await t.request('GET', '/kernels/probe/ping');
    expect(slow.body.status).to.equal('ok');
    expect(slow.body.latency_ms).to.be.at.least(400);
    const task = await t.request('POST', '/kernels/probe/tasks/wait', { body: { ms: 1 } });
    expect(task.body.duration_ms).to.be.at.least(400);
    const e = await ended(t, exp.experiment_id);
    expect(e, e.reason ?? '').to.include({ status: 'completed', deviated: true });
    expect(e.steady_state.before!.held).to.equal(true);
    expect(e.steady_state.during!.domains.probe!.latency_p99_ms).to.be.at.least(400);
    expect(e.steady_state.during!.held).to.equal(false);
    expect(e.steady_state.after!.held).to.equal(true);
    expect(e.time_to_recover_ms).to.be.a('number');
    expect(e.injections).to.have.length(2);
    for (const i of e.injections) expect(i.rolled_back_at).to.be.a('string');
    expect(e.injected_at! <= e.rolled_back_at!).to.equal(true);
    expect(mesh().nodes().every((n) => n.control === null)).to.equal(true);
    const fast = await t.request('GET', '/kernels/probe/ping');
    expect(fast.body.latency_ms).to.be.below(400);
    expect(events.filter((x) => x.experiment_id === e.experiment_id).map((x) => x.phase)).to.deep.equal(['started', 'injected', 'deviated', 'rolled_back', 'ended']);
    const acts = (await t.host.services.actions.list({ limit: 100, target_type: 'chaos_experiment', target_id: e.experiment_id })).actions;
    const auto = acts.filter((a) => a.source === 'automated');
    expect(auto.map((a) => a.action).reverse()).to.deep.equal(['chaos_experiment_started', 'chaos_experiment_deviated', 'chaos_experiment_ended']);
    expect(auto.every((a) => a.actor === 'chaos' && a.cause === e.experiment_id)).to.equal(true);
    expect(acts.find((a) => a.source === 'manual')).to.include({ action: 'run_chaos_experiment', actor: caller.id });
  });

  it('error: tasks on the injected node fail (counted), the others succeed; rollback stops the failures', async () => {
    const exp = await t.host.service(chaosEngineRef).run(def({ injection_type: 'error', parameters: { error_rate: 1, node_share: 0.5 } }), caller);
    const running = await phase(t, exp.experiment_id, 'injected');
    expect(running.injections).to.have.length(1);
    const bad = running.injections[0]!.node_id;
    expect(mesh().node(bad).control).to.deep.equal({ error_rate: 1 });
    const failedBefore = mesh().node(bad).tasks_failed;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await t.request('POST', '/kernels/probe/tasks/wait', { body: { ms: 1 } })).status);
    expect(statuses).to.include(502);
    expect(statuses).to.include(200);
    expect(mesh().node(bad).tasks_failed).to.be.above(failedBefore);
    const e = await ended(t, exp.experiment_id);
    const during = e.steady_state.during!.domains.probe!;
    expect(during.failed).to.be.above(0);
    expect(during.succeeded).to.be.above(0);
    expect(during.failures.join()).to.match(/injected failure/);
    expect(e.deviated).to.equal(true);
    expect(e.steady_state.after!.domains.probe!.success_ratio).to.equal(1);
    expect(mesh().node(bad).control).to.equal(null);
    for (let i = 0; i < 4; i++) expect((await t.request('POST', '/kernels/probe/tasks/wait', { body: { ms: 1 } })).status).to.equal(200);
  });

  it('worker_crash: threads are killed and Piscina replaces them with new threads', async () => {
    const probeNodes = () => t.host.services.mesh.kernelOf('probe').nodes;
    const idsBefore = new Set(probeNodes().flatMap((n) => [...n.liveThreads.keys()]));
    const counts = new Map(probeNodes().map((n) => [n.id, { starts: n.threadStarts, exits: n.threadExits }]));
    const exp = await t.host.service(chaosEngineRef).run(def({ injection_type: 'worker_crash', parameters: { interval_ms: 300, threads_per_crash: 1, node_share: 1 }, hypothesis: { description: 'lenient', min_success_ratio: 0.5, max_latency_p99_ms: 5000 } }), caller);
    const e = await ended(t, exp.experiment_id);
    expect(e.status, e.reason ?? '').to.equal('completed');
    expect(e.effects.threads_killed).to.be.at.least(2);
    expect(e.effects.threads_exited).to.be.at.least(2);
    expect(e.effects.threads_replaced).to.be.at.least(2);
    expect((e.effects.nodes as Array<{ new_thread_ids: number[] }>).every((n) => n.new_thread_ids.length > 0)).to.equal(true);
    // Every thread that exited was replaced: each pool is back to its size, with new thread ids.
    const state = () => JSON.stringify(probeNodes().map((n) => ({ id: n.id, live: [...n.liveThreads.keys()], pool: n.pool?.threads.map((w) => w.threadId), starts: n.threadStarts, exits: n.threadExits, before: counts.get(n.id) })));
    await until(() => probeNodes().every((n) => n.pool!.threads.length === 2 && n.liveThreads.size === 2 && n.pool!.threads.every((w) => n.liveThreads.has(w.threadId))), 10_000, 'every crashed thread replaced').catch((err: Error) => {
      throw new Error(`${err.message}: ${state()}`);
    });
    const idsAfter = probeNodes().flatMap((n) => [...n.liveThreads.keys()]);
    expect(idsAfter.some((id) => !idsBefore.has(id))).to.equal(true);
    expect(probeNodes().reduce((a, n) => a + n.threadExits - counts.get(n.id)!.exits, 0)).to.be.at.least(e.effects.threads_killed as number);
    expect(probeNodes().reduce((a, n) => a + n.threadStarts - counts.get(n.id)!.starts, 0)).to.be.at.least(e.effects.threads_killed as number);
    expect((await t.request('POST', '/kernels/probe/tasks/wait', { body: { ms: 1 } })).status).to.equal(200);
  });

  it('cpu_stress: busy threads show in heartbeat loop delay and probe latency; rollback calms them', async () => {
    const exp = await t.host.service(chaosEngineRef).run(def({ injection_type: 'cpu_stress', parameters: { cpu_share: 0.9, period_ms: 400, node_share: 1 }, duration_seconds: 2, hypothesis: { description: 'tight', min_success_ratio: 0.9, max_latency_p99_ms: 250 } }), caller);
    await phase(t, exp.experiment_id, 'injected');
    await until(() => mesh().node('probe-1').live_threads.some((x) => (x.loop_delay_p99_ms ?? 0) > 200), 4000, 'loop delay under stress');
    const e = await ended(t, exp.experiment_id);
    expect(e.status, e.reason ?? '').to.equal('completed');
    expect(e.steady_state.during!.domains.probe!.latency_p99_ms).to.be.above(e.steady_state.before!.domains.probe!.latency_p99_ms!);
    expect(e.steady_state.during!.domains.probe!.latency_p99_ms).to.be.above(250);
    expect(e.deviated).to.equal(true);
    await until(() => mesh().node('probe-1').live_threads.every((x) => (x.loop_delay_p99_ms ?? 0) < 150), 4000, 'loop delay back down');
  });

  it('node_pause: pauses a share of the nodes (as the chaos actor) and resumes them at rollback', async () => {
    const exp = await t.host.service(chaosEngineRef).run(def({ injection_type: 'node_pause', parameters: { node_share: 0.5 }, hypothesis: { description: 'the other node takes the work', min_success_ratio: 1, max_latency_p99_ms: 1000 } }), caller);
    const running = await phase(t, exp.experiment_id, 'injected');
    const paused = running.injections[0]!.node_id;
    expect(mesh().node(paused).state).to.equal('paused');
    expect(mesh().nodes().filter((n) => n.kernel_id === 'probe' && n.state === 'active')).to.have.length(1);
    const e = await ended(t, exp.experiment_id);
    expect(e).to.include({ status: 'completed', deviated: false });
    expect(mesh().node(paused).state).to.equal('active');
    const acts = await t.host.services.actions.list({ limit: 50, actor: 'chaos' });
    const mine = acts.actions.filter((a) => a.cause === exp.experiment_id).map((a) => a.action);
    expect(mine).to.include.members(['pause_node', 'resume_node', 'chaos_experiment_started', 'chaos_experiment_ended']);
  });

  it('abort mid-run removes every injection at once; a second run on the same domain meanwhile is 409', async () => {
    const exp = await t.host.service(chaosEngineRef).run(def({ injection_type: 'latency', parameters: { latency_ms: 80 }, duration_seconds: 30 }), caller);
    await phase(t, exp.experiment_id, 'injected');
    let conflict = 0;
    await t.host.service(chaosEngineRef).run(def({ injection_type: 'error', parameters: { error_rate: 0.1 } }), caller).catch((e: { status: number }) => (conflict = e.status));
    expect(conflict).to.equal(409);
    const t0 = Date.now();
    const aborted = await t.host.service(chaosEngineRef).abort(exp.experiment_id, caller);
    expect(Date.now() - t0).to.be.below(3000);
    expect(aborted).to.include({ status: 'aborted', aborted_by: caller.id });
    expect(aborted.rolled_back_at).to.be.a('string');
    expect(aborted.injections.every((i) => i.rolled_back_at)).to.equal(true);
    expect(mesh().nodes().every((n) => n.control === null)).to.equal(true);
    await sleep(200);
    expect((await t.host.service(chaosEngineRef).get('platform', exp.experiment_id)).status).to.equal('aborted');
    // Once aborted, the domain is free at once.
    const next = await t.host.service(chaosEngineRef).run(def({ injection_type: 'latency', parameters: { latency_ms: 5 }, duration_seconds: 30 }), caller);
    expect((await t.host.service(chaosEngineRef).abort(next.experiment_id, caller)).status).to.equal('aborted');
  });

  it('counts what ran in the report', async () => {
    const r = await t.host.service(chaosEngineRef).report('platform');
    expect(r.overall.experiments_run).to.equal(7);
    expect(r.overall.aborted).to.equal(2);
    expect(r.overall.completed).to.equal(5);
    expect(r.overall.passed).to.be.at.least(1);
    expect(r.overall.deviated).to.be.at.least(3);
    expect(r.overall.passed + r.overall.deviated).to.equal(5);
    expect(r.overall.resilience_score).to.be.within(40, 100);
    expect(r.overall.mean_time_to_recover_ms).to.be.a('number');
    expect(r.domains.map((d) => d.domain)).to.deep.equal(['probe']);
  });
});
