// The chaos engine (DESIGN §5-6): runs experiments on the live mesh with a journal in the
// style of Chaos Toolkit (steady state before, during and after; deviated; rollbacks). No
// injection outlives its experiment: abort, halt and host stop roll back at once, and a
// process that died mid-run leaves a claim (lease) that another start takes over.
import crypto from 'node:crypto';
import type { ActiveExperiment, ChaosRuns } from '../../../core/contracts/chaos';
import { createServiceRef } from '../../../core/plugin';
import type { ActionLog } from '../../../core/actions';
import type { Config } from '../../../core/config';
import { nowIso, type Db } from '../../../core/db';
import { Conflict, HttpError, NotFound } from '../../../core/errors';
import type { EventBus } from '../../../core/events';
import type { Logger } from '../../../core/logger';
import type { Mesh } from '../../../core/mesh/mesh';
import type { ActionActor } from '../../../core/mesh/types';
import { bodyOrThrow } from '../../../core/cluster/bus';
import { ChaosCluster } from './cluster';
import { clusterNodes, crashEffects, plan, type Planned } from './injections';
import { judge, merge, type Sample } from './probes';
import type { Experiment, ExperimentStatus, Hypothesis, InjectionType, Measurement, Parameters, Scenario } from './schemas';
import { withInjections } from './store';
import { createScenario, getScenario, listScenarios, seedBuiltins } from './scenarios';
import { listExperiments, report } from './report';
import { validate } from './validation';
import { reclaim } from './takeover';
import type { ScenarioInput } from './schemas';

type Cfg = Config['chaos'];
type Halted = { halted: string[]; halted_total: number; injections_removed: number };
type Parameters_<F extends (...a: any[]) => unknown> = globalThis.Parameters<F>;

/** What an experiment runs: a scenario's definition (copied into the journal). */
export interface Definition {
  scenario_id: string | null;
  scenario_name: string;
  kind: 'scenario' | 'validation';
  injection_type: InjectionType;
  target_domains: string[];
  parameters: Parameters;
  duration_seconds: number;
  hypothesis: Hypothesis;
}

interface Live {
  id: string;
  tenantId: string;
  def: Definition;
  domains: string[];
  controller: AbortController;
  injections: Planned[];
  finished: boolean;
  deviationSent: boolean;
  done: Promise<void>;
  crashLoop: NodeJS.Timeout | null;
  /** Takes back crashes still queued when the fault is rolled back. */
  crashes: AbortController;
  /** The domains are held by a validation, which releases them itself. */
  reserved: boolean;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

export class ChaosService implements ChaosRuns {
  /** This process's id in the experiments' claims. */
  readonly owner = crypto.randomUUID();
  readonly live = new Map<string, Live>();
  /** Domains held by a running experiment or validation of this process. */
  readonly busy = new Map<string, string>();
  private sweeper: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Where faults and probes run: this host, or the host that runs the node (cluster.ts). */
  readonly cluster: ChaosCluster;

  constructor(
    readonly cfg: Cfg,
    readonly db: Db,
    readonly mesh: Mesh,
    readonly events: EventBus,
    readonly actions: ActionLog,
    readonly log: Logger,
  ) {
    this.cluster = new ChaosCluster(mesh);
  }

  /** Experiments running now on any host (ChaosRuns, core/contracts/chaos.ts). */
  async active(): Promise<ActiveExperiment[]> {
    const rows = (await this.db('chaos_experiments').where({ status: 'running' }).orderBy('started_at')) as Array<Record<string, string>>;
    return rows.map((r) => ({
      id: r.id,
      tenant_id: r.tenant_id,
      scenario_name: r.scenario_name,
      injection_type: r.injection_type,
      target_domains: JSON.parse(r.target_domains) as string[],
      started_at: r.started_at,
    }));
  }

  async start(): Promise<void> {
    if (this.cfg.seedBuiltins) await seedBuiltins(this.db, this.mesh.kernelIds());
    this.cluster.register(this);
    await this.reclaim();
    this.sweeper = setInterval(() => void this.tick(), Math.max(100, Math.floor(this.cfg.leaseMs / 3)));
    this.sweeper.unref();
  }

  /** Renews this process's claims and takes over experiments whose process is gone. */
  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      if (this.live.size) await this.db('chaos_experiments').whereIn('id', [...this.live.keys()]).andWhere({ owner: this.owner, status: 'running' }).update({ lease_until: this.leaseUntil() });
      await this.reclaim();
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'chaos: lease renewal failed');
    }
  }

  private leaseUntil(): string {
    return new Date(Date.now() + this.cfg.leaseMs).toISOString();
  }

  /** Stops every running experiment (rolled back, status aborted) before the mesh stops. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweeper) clearInterval(this.sweeper);
    const lives = [...this.live.values()];
    await Promise.allSettled(lives.map((l) => this.abortLive(l, 'chaos', 'the host is stopping')));
    await Promise.allSettled(lives.map((l) => l.done));
  }

  // ---- scenarios, history, report (tenant-scoped reads) ----

  listScenarios(tenantId: string, q: Parameters_<typeof listScenarios>[2]) {
    return listScenarios(this.db, tenantId, q);
  }

  getScenario(tenantId: string, id: string): Promise<Scenario> {
    return getScenario(this.db, tenantId, id);
  }

  createScenario(input: ScenarioInput, caller: { id: string; tenantId: string }): Promise<Scenario> {
    return createScenario(this.db, input, caller, this.mesh.kernelIds());
  }

  async runScenario(id: string, caller: { id: string; tenantId: string }): Promise<Experiment> {
    return this.run(ChaosService.definition(await this.getScenario(caller.tenantId, id)), caller);
  }

  listExperiments(tenantId: string, q: Parameters_<typeof listExperiments>[2]) {
    return listExperiments(this.db, tenantId, q);
  }

  report(tenantId: string, since?: string) {
    return report(this.db, tenantId, since);
  }

  // ---- journal helpers ----

  private actor(id: string): ActionActor {
    return { source: 'automated', actor: 'chaos', cause: id };
  }

  async record(tenantId: string, expId: string, action: string, targetType: string, targetId: string, detail: Record<string, unknown>, result: 'succeeded' | 'failed' = 'succeeded') {
    await this.actions.record({ source: 'automated', actor: 'chaos', cause: expId, action, target_type: targetType, target_id: targetId, result, detail, tenant_id: tenantId }).catch((err: Error) => this.log.warn({ err: err.message }, 'chaos: action not recorded'));
  }

  publish(phase: string, e: { id: string; tenantId: string; def: Definition }, extra: Record<string, unknown> = {}) {
    this.events.publish('chaos_experiment', {
      experiment_id: e.id,
      scenario_id: e.def.scenario_id,
      injection_type: e.def.injection_type,
      target_domains: e.def.target_domains,
      tenant_id: e.tenantId,
      phase,
      ...extra,
    });
  }

  private async update(id: string, patch: Record<string, unknown>): Promise<void> {
    await this.db('chaos_experiments').where({ id, status: 'running' }).update(patch);
  }

  async get(tenantId: string, id: string): Promise<Experiment> {
    const row = await this.db('chaos_experiments').where({ id, tenant_id: tenantId }).first();
    if (!row) throw new NotFound(`Experiment ${id} not found`);
    return (await withInjections(this.db, [row]))[0];
  }

  // ---- starting ----

  /** 409 when a target domain is held by a running experiment (this process's, or another live one's). */
  async checkFree(domains: string[]): Promise<void> {
    for (const d of domains) {
      const holder = this.busy.get(d);
      if (holder) throw new Conflict(`Domain ${d} is already under a running chaos experiment (${holder}); wait for it to end or abort it`);
    }
    const others = await this.db('chaos_experiments').where({ status: 'running' }).andWhere('lease_until', '>', nowIso()).select('id', 'target_domains');
    for (const r of others) {
      const overlap = (JSON.parse(r.target_domains) as string[]).filter((d) => domains.includes(d));
      if (overlap.length) throw new Conflict(`Domain ${overlap[0]} is already under a running chaos experiment (${r.id}); wait for it to end or abort it`);
    }
  }

  /** Checks the targets exist (404) and are free (409), then starts the experiment; answers its first record. */
  async run(def: Definition, caller: { id: string; tenantId: string }): Promise<Experiment> {
    for (const d of def.target_domains) clusterNodes(this.mesh, d);
    await this.checkFree(def.target_domains);
    // 409 now rather than a failed run later when a kernel has no node the fault can act on.
    plan(this.mesh, def.injection_type, def.target_domains, def.parameters);
    const live = await this.begin(def, caller);
    await this.actions.record({ source: 'manual', actor: caller.id, action: 'run_chaos_experiment', target_type: 'chaos_experiment', target_id: live.id, cause: def.scenario_id, result: 'succeeded', detail: { scenario_name: def.scenario_name, injection_type: def.injection_type, target_domains: def.target_domains }, tenant_id: caller.tenantId });
    return this.get(caller.tenantId, live.id);
  }

  /** Reserves the domains (synchronously, so two calls cannot both pass), writes the record and starts the run. */
  async begin(def: Definition, caller: { id: string; tenantId: string }, reserved = false): Promise<Live> {
    if (this.stopped) throw new Conflict('The host is stopping; no new experiment starts');
    if (!reserved) {
      for (const d of def.target_domains) if (this.busy.has(d)) throw new Conflict(`Domain ${d} is already under a running chaos experiment (${this.busy.get(d)}); wait for it to end or abort it`);
    }
    const id = crypto.randomUUID();
    if (!reserved) for (const d of def.target_domains) this.busy.set(d, id);
    const duration = Math.min(def.duration_seconds, this.cfg.maxDurationSeconds);
    const d2: Definition = { ...def, duration_seconds: duration };
    try {
      await this.db('chaos_experiments').insert({
        id,
        tenant_id: caller.tenantId,
        scenario_id: def.scenario_id,
        scenario_name: def.scenario_name,
        kind: def.kind,
        injection_type: def.injection_type,
        target_domains: JSON.stringify(def.target_domains),
        parameters: JSON.stringify(def.parameters),
        duration_seconds: duration,
        hypothesis: JSON.stringify(def.hypothesis),
        status: 'running',
        phase: 'steady_state_before',
        effects: JSON.stringify(duration < def.duration_seconds ? { duration_capped_from_seconds: def.duration_seconds } : {}),
        started_at: nowIso(),
        started_by: caller.id,
        owner: this.owner,
        host: this.mesh.hostId,
        lease_until: this.leaseUntil(),
      });
    } catch (err) {
      if (!reserved) for (const d of def.target_domains) this.busy.delete(d);
      throw err;
    }
    const live: Live = { id, tenantId: caller.tenantId, def: d2, domains: def.target_domains, controller: new AbortController(), injections: [], finished: false, deviationSent: false, done: Promise.resolve(), crashLoop: null, crashes: new AbortController(), reserved };
    this.live.set(id, live);
    this.publish('started', live, { status: 'running' });
    await this.record(live.tenantId, id, 'chaos_experiment_started', 'chaos_experiment', id, { scenario_name: def.scenario_name, injection_type: def.injection_type, target_domains: def.target_domains, duration_seconds: duration });
    live.done = this.execute(live)
      .catch(async (err: Error) => {
        this.log.warn({ err: err.message, experiment: id }, 'chaos experiment failed');
        await this.rollbackAll(live);
        await this.finish(live, { status: 'failed', reason: `the experiment failed: ${err.message}` });
      })
      .finally(() => this.release(live));
    return live;
  }

  // ---- running ----

  private async execute(live: Live): Promise<void> {
    const { def } = live;
    const signal = live.controller.signal;
    const probeCfg = this.cfg.probes;
    let t = nowIso();
    const before = judge(await this.cluster.probe(def.target_domains, probeCfg, signal), def.hypothesis, t);
    if (signal.aborted) return;
    await this.update(live.id, { before: JSON.stringify(before), phase: 'injecting' });
    if (!before.held) {
      return this.finish(live, { status: 'failed', reason: `the steady state did not hold before injection (${describe(before)}); nothing was injected` });
    }

    // Inject: each injection is stored before it is applied, so a crash in between still leaves a row to roll back.
    live.injections = plan(this.mesh, def.injection_type, def.target_domains, def.parameters);
    await this.db('chaos_injections').insert(live.injections.map((i) => ({ id: i.id, experiment_id: live.id, tenant_id: live.tenantId, node_id: i.node_id, domain: i.domain, kind: i.kind, detail: '{}' })));
    for (const inj of live.injections) {
      if (signal.aborted) break;
      try {
        await this.cluster.apply(inj, def.parameters, this.actor(live.id));
      } catch (err) {
        // A node removed (or its host lost) since the registry's last heartbeat: the others still get the fault.
        if (!(err instanceof HttpError) || (err.status !== 404 && err.code !== 'NODE_HOST_LOST')) throw err;
        inj.rolledBack = true;
        await this.db('chaos_injections').where({ id: inj.id }).update({ rolled_back_at: nowIso(), rollback_note: `never applied: ${err.message}` });
        continue;
      }
      await this.db('chaos_injections').where({ id: inj.id }).update({ applied_at: nowIso(), detail: JSON.stringify(inj.detail) });
      // An abort that came while this fault was being applied saw it as not applied yet: remove it now.
      if (inj.rolledBack) {
        inj.rolledBack = false;
        await this.rollbackOne(live, inj);
      }
      if (inj.kind !== 'node_pause') await this.record(live.tenantId, live.id, 'inject_fault', 'node', inj.node_id, { kind: inj.kind, ...inj.detail });
    }
    if (signal.aborted) {
      await this.db('chaos_injections').where({ experiment_id: live.id }).whereNull('rolled_back_at').update({ rolled_back_at: nowIso(), rollback_note: 'never applied: the experiment was stopped first' });
      return;
    }
    if (!live.injections.some((i) => i.applied)) {
      await this.rollbackAll(live);
      return this.finish(live, { status: 'failed', reason: 'no target node could take the fault (each was removed, or its host lost, before the injection)' });
    }
    const injectedAt = nowIso();
    await this.update(live.id, { injected_at: injectedAt, phase: 'injected' });
    this.publish('injected', live, { status: 'running', nodes: live.injections.map((i) => i.node_id) });
    if (def.injection_type === 'worker_crash') this.startCrashes(live);

    // During: probe rounds until the duration ends (or an abort).
    const end = Date.now() + def.duration_seconds * 1000;
    const all = new Map<string, Sample[]>();
    t = nowIso();
    while (!signal.aborted && Date.now() < end) {
      const round = await this.cluster.probe(def.target_domains, probeCfg, signal);
      if (signal.aborted) break;
      merge(all, round);
      const m = judge(round, def.hypothesis, t);
      if (!m.held) await this.deviation(live, 'during', m);
      await sleep(Math.min(probeCfg.intervalMs, Math.max(0, end - Date.now())), signal);
    }
    if (signal.aborted) return;
    const during = judge(all, def.hypothesis, t);
    await this.rollbackAll(live);
    if (live.finished) return;
    const rolledBackAt = Date.now();
    if (def.injection_type === 'worker_crash') await this.waitForPools(live, signal, rolledBackAt + this.cfg.recoveryTimeoutSeconds * 1000);
    await this.update(live.id, { during: JSON.stringify(during), rolled_back_at: new Date(rolledBackAt).toISOString(), phase: 'steady_state_after' });
    this.publish('rolled_back', live, { status: 'running' });

    // After: rounds until every domain holds, or the recovery timeout.
    const recovery: Record<string, number | null> = Object.fromEntries(def.target_domains.map((d) => [d, null]));
    let after: Measurement | null = null;
    const giveUp = rolledBackAt + this.cfg.recoveryTimeoutSeconds * 1000;
    for (;;) {
      t = nowIso();
      after = judge(await this.cluster.probe(def.target_domains, probeCfg, signal), def.hypothesis, t);
      if (signal.aborted) return;
      for (const [d, m] of Object.entries(after.domains)) if (m.held && recovery[d] === null) recovery[d] = Date.now() - rolledBackAt;
      if (after.held || Date.now() >= giveUp) break;
      await sleep(probeCfg.intervalMs, signal);
    }
    if (!after.held) await this.deviation(live, 'after', after);
    const effects = await this.effects(live);
    await this.finish(live, {
      status: 'completed',
      deviated: !during.held || !after.held,
      reason: !during.held || !after.held ? `${!during.held ? `during the injection: ${describe(during)}` : ''}${!during.held && !after.held ? '; ' : ''}${!after.held ? `not recovered within ${this.cfg.recoveryTimeoutSeconds} s: ${describe(after)}` : ''}` : null,
      after: JSON.stringify(after),
      time_to_recover_ms: after.held ? Date.now() - rolledBackAt : null,
      effects: JSON.stringify({ ...effects, time_to_recover_ms_by_domain: recovery }),
    });
  }

  private async effects(live: Live): Promise<Record<string, unknown>> {
    const row = await this.db('chaos_experiments').where({ id: live.id }).first('effects');
    const base = row ? (JSON.parse(row.effects) as Record<string, unknown>) : {};
    if (live.def.injection_type !== 'worker_crash') return base;
    const per = await Promise.all(live.injections.map(async (i) => ({ node_id: i.node_id, crashes_requested: i.detail.crashes_requested ?? 0, ...crashEffects(await this.cluster.state(i.node_id).catch(() => null), i) })));
    const sum = (k: string) => per.reduce((a, p) => a + Number((p as Record<string, unknown>)[k] ?? 0), 0);
    return { ...base, threads_killed: sum('crashes_requested'), threads_exited: sum('threads_exited'), threads_replaced: sum('threads_replaced'), nodes: per };
  }

  /** Waits (bounded) until every crashed node has its full thread count again: the replacements Piscina starts. */
  private async waitForPools(live: Live, signal: AbortSignal, until: number): Promise<void> {
    const full = async () => {
      for (const i of live.injections) {
        const node = await this.cluster.state(i.node_id).catch(() => null);
        if (node?.hasThreads && !(node.liveThreadIds.length >= node.threads && node.threadStarts - Number(i.detail.thread_starts_before ?? 0) >= node.threadExits - Number(i.detail.thread_exits_before ?? 0))) return false;
      }
      return true;
    };
    while (!(await full()) && !signal.aborted && Date.now() < until) await sleep(20, signal);
  }

  /**
   * worker_crash: every interval, ends up to threads_per_crash threads of each target node.
   * A node is only hit when all its threads are up (a heartbeat each) and idle enough, and no
   * crash of it is pending: a crash must never reach a thread that is still booting, or
   * Piscina would take it for a worker that fails at start and stop replacing threads.
   */
  private startCrashes(live: Live): void {
    const p = live.def.parameters;
    const pending = new Set<string>();
    const crash = () => {
      if (live.controller.signal.aborted || live.finished) return;
      for (const inj of live.injections) {
        if (pending.has(inj.node_id)) continue;
        pending.add(inj.node_id);
        void this.cluster
          .crash(inj.node_id, p.threads_per_crash ?? 1, live.crashes.signal)
          .then((ended) => {
            if (ended === null) inj.detail.ticks_skipped = Number(inj.detail.ticks_skipped ?? 0) + 1;
            else inj.detail.crashes_requested = Number(inj.detail.crashes_requested ?? 0) + ended;
          })
          .catch((err: Error) => {
            inj.detail.crash_errors = Number(inj.detail.crash_errors ?? 0) + 1;
            this.log.warn({ err: err.message, node: inj.node_id }, 'chaos: a worker_crash tick failed');
          })
          .finally(() => pending.delete(inj.node_id));
      }
    };
    crash();
    live.crashLoop = setInterval(crash, p.interval_ms ?? 1000);
    live.crashLoop.unref();
  }

  private async deviation(live: Live, phase: 'during' | 'after', m: Measurement): Promise<void> {
    if (live.deviationSent || live.finished) return;
    live.deviationSent = true;
    this.publish('deviated', live, { status: 'running', deviated: true, during: phase, reason: describe(m) });
    await this.record(live.tenantId, live.id, 'chaos_experiment_deviated', 'chaos_experiment', live.id, { phase, reason: describe(m) });
  }

  /** Removes every injection of the experiment (idempotent) and stores the rollback. */
  private async rollbackAll(live: Live): Promise<void> {
    if (live.crashLoop) clearInterval(live.crashLoop);
    live.crashLoop = null;
    live.crashes.abort();
    // Control faults are removed synchronously first, so that an abort takes effect at once.
    await Promise.all(live.injections.map((inj) => this.rollbackOne(live, inj)));
  }

  private async rollbackOne(live: Live, inj: Planned): Promise<void> {
    if (inj.rolledBack) return;
    let note: string | null;
    try {
      note = await this.cluster.rollback(inj, this.actor(live.id));
    } catch (err) {
      note = `rollback failed: ${(err as Error).message}`;
    }
    await this.db('chaos_injections').where({ id: inj.id }).update({ rolled_back_at: nowIso(), rollback_note: note, detail: JSON.stringify(inj.detail) }).catch(() => undefined);
    if (inj.applied && inj.kind !== 'node_pause') await this.record(live.tenantId, live.id, 'rollback_fault', 'node', inj.node_id, { kind: inj.kind, note });
  }

  /** Frees the experiment's domains: once it has ended, a new run may start there at once. */
  private release(live: Live): void {
    this.live.delete(live.id);
    if (!live.reserved) for (const d of live.domains) if (this.busy.get(d) === live.id) this.busy.delete(d);
  }

  /** Writes the end of an experiment once; later calls do nothing. */
  private async finish(live: Live, patch: { status: ExperimentStatus; reason: string | null; deviated?: boolean | null; aborted_by?: string } & Record<string, unknown>): Promise<void> {
    if (live.finished) return;
    live.finished = true;
    const now = nowIso();
    const hadInjections = live.injections.some((i) => i.applied);
    const row: Record<string, unknown> = { ...patch, ended_at: now, phase: 'ended' };
    if (hadInjections) {
      const r = await this.db('chaos_experiments').where({ id: live.id }).first('rolled_back_at');
      if (!r?.rolled_back_at) row.rolled_back_at = now;
    }
    if (patch.status === 'aborted' || patch.status === 'failed') row.effects = JSON.stringify(await this.effects(live));
    await this.db('chaos_experiments').where({ id: live.id }).update(row);
    this.release(live);
    this.publish('ended', live, { status: patch.status, deviated: patch.deviated ?? null, reason: patch.reason });
    await this.record(live.tenantId, live.id, 'chaos_experiment_ended', 'chaos_experiment', live.id, { status: patch.status, deviated: patch.deviated ?? null, reason: patch.reason });
  }

  // ---- stopping ----

  private async abortLive(live: Live, by: string, reason: string): Promise<void> {
    live.controller.abort();
    await this.rollbackAll(live);
    await this.finish(live, { status: 'aborted', reason, aborted_by: by });
  }

  /** Aborts a running experiment of the caller's tenant: every injection is removed at once. */
  async abort(id: string, caller: { id: string; tenantId: string }): Promise<Experiment> {
    const exp = await this.get(caller.tenantId, id);
    const live = this.live.get(id);
    if (exp.status === 'running' && !live) {
      // Run by another host of the cluster: that host aborts it (and records the abort).
      const row = await this.db('chaos_experiments').where({ id }).first('host');
      const host = row?.host as string | null;
      if (host && host !== this.mesh.hostId && this.mesh.bus) return bodyOrThrow<Experiment>(await this.mesh.bus.request(host, id, 'chaos.abort', { caller }, { what: `experiment ${id}` }), host);
    }
    if (exp.status !== 'running' || !live || live.finished) {
      throw new Conflict(exp.status === 'running' ? `Experiment ${id} runs in another host process; abort it there` : `Experiment ${id} is ${exp.status}, not running`);
    }
    await this.abortLive(live, caller.id, `aborted by ${caller.id}`);
    await this.actions.record({ source: 'manual', actor: caller.id, action: 'abort_chaos_experiment', target_type: 'chaos_experiment', target_id: id, cause: null, result: 'succeeded', detail: { injections_removed: live.injections.filter((i) => i.applied).length }, tenant_id: caller.tenantId });
    return this.get(caller.tenantId, id);
  }

  /**
   * Emergency stop: aborts every running experiment of every tenant, on this host and (in a
   * cluster) on every live host, which each halt their own.
   */
  async halt(caller: { id: string; tenantId: string }): Promise<Halted> {
    const here = await this.haltHere(caller);
    const bus = this.mesh.bus;
    if (!bus) return here;
    const others = this.mesh.hosts().filter((h) => h.live && !h.this_host && h.host_id);
    const answers = await Promise.all(others.map((h) => bus.request(h.host_id!, h.host_id!, 'chaos.halt', { caller }, { what: 'its experiments' }).then((a) => bodyOrThrow<Halted>(a, h.host_id!))));
    for (const a of answers) {
      here.halted.push(...a.halted);
      here.halted_total += a.halted_total;
      here.injections_removed += a.injections_removed;
    }
    return here;
  }

  /** This host's part of a halt. */
  async haltHere(caller: { id: string; tenantId: string }): Promise<Halted> {
    const lives = [...this.live.values()].filter((l) => !l.finished);
    let removed = 0;
    await Promise.all(
      lives.map(async (l) => {
        removed += l.injections.filter((i) => i.applied && !i.rolledBack).length;
        await this.abortLive(l, caller.id, `halted by ${caller.id}`);
      }),
    );
    await this.actions.record({ source: 'manual', actor: caller.id, action: 'halt_chaos', target_type: 'chaos', target_id: 'all', cause: null, result: 'succeeded', detail: { experiments: lives.length, injections_removed: removed }, tenant_id: caller.tenantId });
    return { halted: lives.filter((l) => l.tenantId === caller.tenantId).map((l) => l.id), halted_total: lives.length, injections_removed: removed };
  }

  /** Takes over experiments whose process is gone (see takeover.ts). */
  reclaim(): Promise<number> {
    return reclaim(this);
  }

  /** POST /chaos/validate_production (see validation.ts). */
  validate(domains: string[], latencyMs: number, caller: { id: string; tenantId: string }) {
    return validate(this, domains, latencyMs, caller);
  }

  /** A scenario's definition for a run. */
  static definition(s: Scenario): Definition {
    return { scenario_id: s.scenario_id, scenario_name: s.name, kind: 'scenario', injection_type: s.injection_type, target_domains: s.target_domains, parameters: s.parameters, duration_seconds: s.duration_seconds, hypothesis: s.hypothesis };
  }
}

/** Which domains missed the hypothesis, and by what. */
export function describe(m: Measurement): string {
  const bad = Object.entries(m.domains).filter(([, d]) => !d.held);
  return bad.map(([name, d]) => `${name}: success ratio ${d.success_ratio ?? 'n/a'}, p99 ${d.latency_p99_ms ?? 'n/a'} ms${d.failures.length ? ` (${d.failures[0]})` : ''}`).join('; ') || 'every domain held';
}

/** The engine itself, for the chaos plugin's routes (and its tests); others use ChaosRuns. */
export const chaosEngineRef = createServiceRef<ChaosService>('chaos.engine');
