// The planning loop: one per tenant, started on request. Every host keeps a timer for every
// running loop; the loop's lease (core/leases.ts) picks the one host that runs an iteration,
// and another host takes over when that one stops or dies. Each iteration
// is recorded with its KPIs, objectives and decisions; each decision is an insight chain and,
// when an action kind applies, goes through governance as the loop agent's proposal.
import crypto from 'node:crypto';
import type { ActionLog } from '../../core/actions';
import type { Config } from '../../core/config';
import type { Db } from '../../core/db';
import type { EventBus } from '../../core/events';
import { LeaderJobs, type Leases } from '../../core/leases';
import type { Logger } from '../../core/logger';
import type { Mesh } from '../../core/mesh/mesh';
import { pageOf } from '../../core/pagination';
import type { Caller } from '../../core/roles';
import { TenantScope } from '../../core/tenancy';
import type { Governance } from '../../core/contracts/governance';
import type { InsightStore, KpiService } from '../../core/contracts/insights';
import type { Iteration, Loop, PlannedAction, PlanningLoop } from '../../core/contracts/planning';
import { decide, objectives } from './planner';
import { loopFigures, planOf, progressOf } from './loop-views';
import { loopRunning } from './errors';

export const LOOP_AGENT = 'cognitive-loop';
const json = (v: unknown) => JSON.stringify(v);

export function toIteration(r: Record<string, any>): Iteration {
  return { ...r, loop_id: r.loop_id ?? null, kpis: JSON.parse(r.kpis), objectives: JSON.parse(r.objectives), decisions: JSON.parse(r.decisions), error: r.error ?? null, finished_at: r.finished_at ?? null } as Iteration;
}
const toLoop = (r: Record<string, any>): Loop => ({ ...r, stopped_at: r.stopped_at ?? null }) as Loop;

/** How often a host looks for loops started through another host. */
const RESCAN_MS = 5000;

export class PlanningService implements PlanningLoop {
  private readonly running = new Set<Promise<unknown>>();
  private readonly jobs: LeaderJobs;

  constructor(
    readonly db: Db,
    private readonly mesh: Mesh,
    private readonly config: Config,
    private readonly events: EventBus,
    private readonly log: Logger,
    readonly kpis: KpiService,
    readonly insights: InsightStore,
    private readonly governance: Governance,
    private readonly actions: ActionLog,
    readonly clock: { now(): Date },
    leases: Leases,
  ) {
    this.jobs = new LeaderJobs(leases, (name, err) => this.log.error({ err: err.message, job: name }, 'planning loop iteration failed'));
  }

  private record(caller: Caller, action: string, id: string, detail: Record<string, unknown> = {}) {
    return this.actions.record({ source: 'manual', actor: caller.id, action, target_type: 'planning_loop', target_id: id, result: 'succeeded', detail, tenant_id: caller.tenantId });
  }

  /** Schedules every loop stored as running, at start and then every RESCAN_MS. */
  resume(): Promise<void> {
    return this.jobs.discover(() => this.scheduleRunning(), RESCAN_MS);
  }

  private async scheduleRunning(): Promise<void> {
    for (const r of await this.db('agi_loops').where({ state: 'running' })) this.schedule(toLoop(r));
  }

  async shutdown(): Promise<void> {
    await this.jobs.stop();
    await Promise.allSettled([...this.running]);
  }

  private agentCaller(tenantId: string): Caller {
    return { kind: 'user', id: `agent:${LOOP_AGENT}`, tenantId, role: 'operator' };
  }

  private jobName(tenantId: string) {
    return `agi.planning_loop:${tenantId}`;
  }

  private schedule(loop: Loop): void {
    this.jobs.schedule(this.jobName(loop.tenant_id), loop.interval_seconds * 1000, async () => {
      // Stopped or replaced through another host: this host's timer goes.
      if ((await this.current(loop.tenant_id))?.id !== loop.id) return false;
      await this.run(loop.tenant_id, 'schedule');
    });
  }

  async current(tenantId: string): Promise<Loop | null> {
    const r = await this.db('agi_loops').where({ tenant_id: tenantId, state: 'running' }).first();
    return r ? toLoop(r) : null;
  }

  async start(caller: Caller, opts: { interval_seconds?: number; window_seconds?: number }): Promise<Loop> {
    const cur = await this.current(caller.tenantId);
    if (cur) throw loopRunning(cur.id);
    const at = this.clock.now().toISOString();
    const loop: Loop = { id: crypto.randomUUID(), tenant_id: caller.tenantId, state: 'running', interval_seconds: opts.interval_seconds ?? this.config.agi.loopIntervalSeconds, window_seconds: opts.window_seconds ?? this.config.agi.windowSeconds, started_by: caller.id, stopped_at: null, created_at: at, updated_at: at };
    await this.db('agi_loops').insert(loop);
    await this.record(caller, 'start_planning_loop', loop.id, { interval_seconds: loop.interval_seconds, window_seconds: loop.window_seconds });
    this.schedule(loop);
    this.events.publish('planning_loop', { loop_id: loop.id, tenant_id: loop.tenant_id, state: 'running' });
    return loop;
  }

  async stop(caller: Caller): Promise<Loop> {
    const cur = await this.current(caller.tenantId);
    if (!cur) throw loopRunning(null);
    const at = this.clock.now().toISOString();
    await this.db('agi_loops').where({ id: cur.id }).update({ state: 'stopped', stopped_at: at, updated_at: at });
    await this.record(caller, 'stop_planning_loop', cur.id);
    await this.jobs.unschedule(this.jobName(caller.tenantId));
    this.events.publish('planning_loop', { loop_id: cur.id, tenant_id: cur.tenant_id, state: 'stopped' });
    return { ...cur, state: 'stopped', stopped_at: at, updated_at: at };
  }

  async iterate(caller: Caller): Promise<Iteration> {
    const it = await this.run(caller.tenantId, 'manual');
    await this.record(caller, 'run_planning_iteration', it.id, { decisions: it.decisions.length });
    return it;
  }

  private async run(tenantId: string, trigger: Iteration['trigger']): Promise<Iteration> {
    const loop = await this.current(tenantId);
    const windowSeconds = loop?.window_seconds ?? this.config.agi.windowSeconds;
    const created = this.clock.now().toISOString();
    const id = crypto.randomUUID();
    // Outcomes of changes applied since the last iteration are measured first.
    await this.settleApplied(tenantId);
    const kpis = await this.kpis.snapshot(tenantId, windowSeconds);
    const objs = objectives(kpis, this.config.agi.workflowFailureTarget);
    const decisions: PlannedAction[] = [];
    let error: string | null = null;
    try {
      const pending = await this.db('agi_approvals').where({ tenant_id: tenantId, state: 'pending' }).select('action');
      const waiting = new Set(pending.map((p) => { const a = JSON.parse(p.action); return `${a.kind}|${a.target}`; }));
      for (const d of await decide(this.db, this.mesh, kpis, objs, this.config.agi.workflowFailureTarget)) {
        // An action already waiting for a human is not proposed twice.
        if (d.kind && waiting.has(`${d.kind}|${d.target}`)) continue;
        const chain = await this.insights.record({ ...d.chain, tenant_id: tenantId, agent_id: LOOP_AGENT });
        let status = 'recommended';
        let approvalId: string | null = null;
        if (d.kind) {
          const r = await this.governance.execute(this.agentCaller(tenantId), { kind: d.kind, target: d.target, params: { ...d.params, reason: d.reason } }, { kind: 'agent', agent_id: LOOP_AGENT }, { reason: d.reason, chain_id: chain.id });
          status = r.status;
          approvalId = r.approval?.id ?? null;
        }
        decisions.push({ objective: d.objective, kind: d.kind ?? d.chain.recommendation!.action, target: d.target, params: d.params, reason: d.reason, chain_id: chain.id, status, approval_id: approvalId });
      }
    } catch (err) {
      error = (err as Error).message;
    }
    const finished = this.clock.now().toISOString();
    const it: Iteration = { id, loop_id: loop?.id ?? null, tenant_id: tenantId, trigger, kpis, objectives: objs, decisions, error, created_at: created, finished_at: finished };
    await this.db('agi_iterations').insert({ ...it, kpis: json(kpis), objectives: json(objs), decisions: json(decisions), updated_at: finished });
    this.events.publish('planning_iteration', { iteration_id: id, loop_id: it.loop_id, tenant_id: tenantId, objectives_unmet: objs.filter((o) => o.status === 'unmet').length, decisions: decisions.length });
    return it;
  }

  /** Applied loop decisions without an outcome get one measured now. */
  async settleApplied(tenantId: string): Promise<void> {
    const rows = await this.db('agi_chains').where({ tenant_id: tenantId, agent_id: LOOP_AGENT }).whereNull('outcome').select('id', 'decision');
    for (const r of rows) if (JSON.parse(r.decision).state === 'applied') await this.insights.settle(r.id);
  }

  async loops(tenantId: string, limit: number, cursor?: string) {
    const { items, next_cursor } = await pageOf(new TenantScope(this.db, tenantId).select('agi_loops'), limit, cursor);
    return { items: items.map(toLoop), next_cursor };
  }

  async loop(tenantId: string, id: string): Promise<Loop> {
    return toLoop(await new TenantScope(this.db, tenantId).get('agi_loops', { id }, 'Loop'));
  }

  async iterations(tenantId: string, f: { loop_id?: string; limit: number; cursor?: string }) {
    const q = new TenantScope(this.db, tenantId).select('agi_iterations');
    if (f.loop_id) q.where('loop_id', f.loop_id);
    const { items, next_cursor } = await pageOf(q, f.limit, f.cursor);
    return { items: items.map(toIteration), next_cursor };
  }

  plan(tenantId: string) {
    return planOf(this, tenantId);
  }

  async progress(tenantId: string) {
    await this.settleApplied(tenantId);
    return progressOf(this, tenantId);
  }

  figures(tenantId: string) {
    return loopFigures(this, tenantId);
  }
}
