import crypto from 'node:crypto';
import type { ActionLog } from '../../../core/actions';
import type { Config } from '../../../core/config';
import { nowIso, type Db } from '../../../core/db';
import type { EventBus } from '../../../core/events';
import { Conflict, invalid, NotFound } from '../../../core/errors';
import type { Leases } from '../../../core/leases';
import type { Logger } from '../../../core/logger';
import type { Mesh } from '../../../core/mesh/mesh';
import type { Caller } from '../../../core/roles';
import { StateConflict } from '../errors';
import type { Sealer } from '../certs/sealing';
import { GateFailed, Rolling, type NodeSpec, type Step } from './rolling';

// A deployment's states (docs/groups/automation.md has the diagram):
//   draft --validate--> validated | invalid;  invalid --validate--> ...
//   validated --execute--> queued -> running -> succeeded
//                                           \-> (gate fails) rolling_back -> rolled_back | failed
//   succeeded | failed --rollback--> rolling_back -> rolled_back | failed
export const DEPLOY_STATES = ['draft', 'validated', 'invalid', 'queued', 'running', 'succeeded', 'rolling_back', 'rolled_back', 'failed'] as const;
export type DeployState = (typeof DEPLOY_STATES)[number];

const ALLOWED: Record<DeployState, string[]> = {
  draft: ['validate'],
  invalid: ['validate'],
  validated: ['validate', 'execute'],
  queued: [],
  running: [],
  rolling_back: [],
  succeeded: ['rollback'],
  failed: ['rollback'],
  rolled_back: [],
};

export interface DeployRow {
  id: string;
  tenant_id: string;
  kernel_id: string;
  state: DeployState;
  target: string;
  before: string | null;
  validation: string | null;
  steps: string;
  reason: string | null;
  /** Sealed JSON: the kernel settings to roll out (null: unchanged). They may hold secrets (an API key). */
  settings_sealed: string | null;
  /** Sealed JSON: each node's spec and the kernel's settings at execute, for the rollback. */
  before_sealed: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
}

/** Values under keys that name a secret are not shown back. */
const SECRET_KEY = /key|secret|token|password/i;
function redacted(settings: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(settings).map(([k, v]) => [k, SECRET_KEY.test(k) ? '(hidden)' : v]));
}

/** The kernel settings a deployment rolls out; null when it leaves them as they are. */
function settingsOf(r: DeployRow, sealer: Sealer): Record<string, unknown> | null {
  return r.settings_sealed ? (JSON.parse(sealer.unseal(r.settings_sealed)) as Record<string, unknown>) : null;
}

export function deployView(r: DeployRow, sealer: Sealer) {
  const target = JSON.parse(r.target) as { nodes: number; threads_per_node: number };
  const settings = settingsOf(r, sealer);
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    kernel_id: r.kernel_id,
    state: r.state,
    allowed_actions: ALLOWED[r.state],
    target: { nodes: target.nodes, threads_per_node: target.threads_per_node, settings: settings && redacted(settings) },
    before: r.before ? (JSON.parse(r.before) as Array<{ id: string; threads: number }>) : null,
    validation: r.validation ? (JSON.parse(r.validation) as Record<string, unknown>) : null,
    steps: JSON.parse(r.steps) as Step[],
    reason: r.reason,
    created_by: r.created_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

const IN_FLIGHT: DeployState[] = ['queued', 'running', 'rolling_back'];
const leaseOf = (id: string) => `automation.deployment:${id}`;

export class Deployments {
  private readonly rolling: Rolling;
  /** Runs in flight in this process (stop waits for them). */
  private readonly running = new Set<Promise<void>>();
  /** Ids of the deployments this process runs now. */
  private readonly mine = new Set<string>();
  private readonly leaseMs: number;
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly mesh: Mesh,
    private readonly actions: ActionLog,
    private readonly events: EventBus,
    private readonly log: Logger,
    config: Config,
    readonly sealer: Sealer,
    private readonly leases: Leases,
  ) {
    this.rolling = new Rolling(mesh, config.automation.deployments);
    this.leaseMs = config.automation.deployments.leaseMs;
  }

  /** Settles what a dead process left in flight, now and every half lease. */
  async start(): Promise<void> {
    await this.sweep();
    this.sweeper = setInterval(() => void this.sweep().catch((err: Error) => this.log.warn({ err: err.message }, 'deployment sweep failed')), this.leaseMs / 2);
    this.sweeper.unref();
  }

  /**
   * A deployment in flight whose lease nobody holds was being run by a process that died
   * (killed, or this host before a restart). It changed that process's own nodes, which went
   * with it, so there is nothing left to roll forward or back: the first host to take its
   * lease settles it as failed, once (the state change is compare-and-set).
   */
  async sweep(): Promise<string[]> {
    const settled: string[] = [];
    const rows = await this.db<DeployRow>('automation_deployments').whereIn('state', IN_FLIGHT).select();
    for (const row of rows) {
      if (this.mine.has(row.id) || (await this.leases.holder(leaseOf(row.id)))) continue;
      if (!(await this.leases.claim(leaseOf(row.id), this.leaseMs))) continue;
      try {
        const reason = `the process running this deployment stopped while it was ${row.state} (its lease ran out); the nodes it was changing stopped with that process, so nothing is left to roll`;
        const done = await this.move(row, IN_FLIGHT, { state: 'failed', reason });
        await this.record('automation.deployment', 'deployment_abandoned', done, 'failed', { reason, previous_state: row.state }, 'automated');
        settled.push(row.id);
      } catch (err) {
        if (!(err instanceof StateConflict)) throw err;
      } finally {
        await this.leases.release(leaseOf(row.id));
      }
    }
    return settled;
  }

  /** Takes the deployment's lease and keeps it renewed until the returned function ends the hold. */
  private async hold(id: string): Promise<() => Promise<void>> {
    if (!(await this.leases.claim(leaseOf(id), this.leaseMs))) throw new Conflict('Another host is running this deployment');
    this.mine.add(id);
    const timer = setInterval(() => void this.leases.claim(leaseOf(id), this.leaseMs).catch(() => undefined), this.leaseMs / 3);
    timer.unref();
    return async () => {
      clearInterval(timer);
      this.mine.delete(id);
      await this.leases.release(leaseOf(id));
    };
  }

  /** Takes the deployment's lease, then moves it; the lease is given back when the move is refused. */
  private async moveHolding(row: DeployRow, from: DeployState[], patch: Partial<DeployRow> & { state: DeployState }): Promise<{ fresh: DeployRow; release: () => Promise<void> }> {
    const release = await this.hold(row.id);
    try {
      return { fresh: await this.move(row, from, patch), release };
    } catch (err) {
      await release();
      throw err;
    }
  }

  async get(tenantId: string, id: string): Promise<DeployRow> {
    const row = await this.db<DeployRow>('automation_deployments').where({ id, tenant_id: tenantId }).first();
    if (!row) throw new NotFound('Deployment not found');
    return row;
  }

  async create(caller: Caller, body: { kernel_id: string; nodes?: number; threads_per_node?: number; settings?: Record<string, unknown> }): Promise<DeployRow> {
    let kernel;
    try {
      kernel = this.mesh.kernel(body.kernel_id);
    } catch {
      throw invalid(['body', 'kernel_id'], `Unknown kernel "${body.kernel_id}"`);
    }
    let settings: Record<string, unknown> | null = null;
    if (body.settings !== undefined) {
      const schema = this.mesh.kernelOf(body.kernel_id).manifest.settings;
      if (!schema) throw invalid(['body', 'settings'], `Kernel "${kernel.id}" declares no settings`);
      const parsed = schema.safeParse(body.settings);
      if (!parsed.success) throw invalid(['body', 'settings', ...(parsed.error.issues[0]?.path ?? []).map(String)], `Not settings of kernel "${kernel.id}": ${parsed.error.issues[0]?.message ?? 'invalid'}`);
      settings = parsed.data as Record<string, unknown>;
    }
    const live = kernel.nodes.filter((n) => n.state !== 'drained');
    const target = { nodes: body.nodes ?? live.length, threads_per_node: body.threads_per_node ?? live[0]?.threads ?? 1 };
    const at = nowIso();
    const row: DeployRow = { id: crypto.randomUUID(), tenant_id: caller.tenantId, kernel_id: body.kernel_id, state: 'draft', target: JSON.stringify(target), before: null, validation: null, steps: '[]', reason: null, settings_sealed: settings ? this.sealer.seal(JSON.stringify(settings)) : null, before_sealed: null, created_by: caller.id, created_at: at, updated_at: at };
    await this.db('automation_deployments').insert(row);
    await this.record(caller.id, 'create_deployment', row, 'succeeded', { target, settings_changed: settings !== null });
    return row;
  }

  private guard(row: DeployRow, action: string): void {
    if (!ALLOWED[row.state].includes(action)) throw new StateConflict(row.state, ALLOWED[row.state], `A ${row.state} deployment cannot ${action}`);
  }

  /** Compare-and-set on the state, so that two calls cannot both move it. */
  private async move(row: DeployRow, from: DeployState[], patch: Partial<DeployRow> & { state: DeployState }): Promise<DeployRow> {
    const n = await this.db('automation_deployments').where({ id: row.id }).whereIn('state', from).update({ ...patch, updated_at: nowIso() });
    const fresh = await this.get(row.tenant_id, row.id);
    if (!n) throw new StateConflict(fresh.state, ALLOWED[fresh.state]);
    this.events.publish('deployment_status', { id: row.id, tenant_id: row.tenant_id, kernel_id: row.kernel_id, state: fresh.state, reason: fresh.reason });
    return fresh;
  }

  /** The kernel answers on a worker, its tasks describe themselves, and capacity exists for the surge node. */
  async validate(caller: Caller, row: DeployRow): Promise<DeployRow> {
    this.guard(row, 'validate');
    const target = JSON.parse(row.target) as { nodes: number; threads_per_node: number };
    const checks: Array<{ name: string; ok: boolean; evidence: string }> = [];
    const kernel = this.mesh.kernel(row.kernel_id);
    checks.push({ name: 'manifest', ok: true, evidence: `kernel ${kernel.id} loaded with ${kernel.tasks.length} tasks` });
    const ping = await this.mesh.ping(row.kernel_id, 5000);
    checks.push({ name: 'worker_answers', ok: ping.ok, evidence: ping.ok ? `node ${ping.node_id} thread ${ping.thread_id} answered in ${ping.latency_ms} ms` : ping.reason });
    let described = 0;
    for (const t of this.mesh.catalogue(row.kernel_id)) if (t.input_schema && t.output_schema) described++;
    checks.push({ name: 'task_schemas', ok: described === kernel.tasks.length, evidence: `${described} of ${kernel.tasks.length} tasks have input and output schemas` });
    const settings = settingsOf(row, this.sealer);
    if (settings) {
      const t = await this.mesh.selfTest(row.kernel_id, settings);
      checks.push({ name: 'self_test', ok: t.ok, evidence: `the kernel's self-test on a scratch worker with the new settings: ${t.detail}` });
    }
    const { maxNodesPerKernel, maxThreads } = this.mesh.cfg;
    const used = this.mesh.nodes().filter((n) => n.state !== 'drained').reduce((s, n) => s + n.threads, 0);
    const surge = target.threads_per_node;
    checks.push({ name: 'node_capacity', ok: target.nodes + 1 <= maxNodesPerKernel, evidence: `${target.nodes} nodes plus one surge node against mesh.maxNodesPerKernel ${maxNodesPerKernel}` });
    const mine = kernel.nodes.filter((n) => n.state !== 'drained').reduce((s, n) => s + n.threads, 0);
    const peak = used - mine + Math.max(mine, target.nodes * target.threads_per_node) + surge;
    checks.push({ name: 'thread_capacity', ok: peak <= maxThreads, evidence: `at most ${peak} threads during the rollout against mesh.maxThreads ${maxThreads}` });
    const ok = checks.every((c) => c.ok);
    const fresh = await this.move(row, ['draft', 'invalid', 'validated'], { state: ok ? 'validated' : 'invalid', validation: JSON.stringify({ ok, checks, checked_at: nowIso() }), reason: ok ? null : checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.evidence}`).join('; ') });
    await this.record(caller.id, 'validate_deployment', fresh, ok ? 'succeeded' : 'failed', { checks });
    return fresh;
  }

  async execute(caller: Caller, row: DeployRow): Promise<DeployRow> {
    this.guard(row, 'execute');
    const before = this.rolling.shape(row.kernel_id);
    const kernelSettings = this.mesh.kernelOf(row.kernel_id).settings;
    const sealedBefore = this.sealer.seal(JSON.stringify({ nodes: before.map((b) => ({ threads: b.threads, settings: b.settings })), kernel: kernelSettings }));
    const { fresh, release } = await this.moveHolding(row, ['validated'], { state: 'queued', before: JSON.stringify(before.map((b) => ({ id: b.id, threads: b.threads }))), before_sealed: sealedBefore, steps: '[]', reason: null });
    await this.record(caller.id, 'execute_deployment', fresh, 'succeeded', {});
    this.track(this.run(fresh, caller.id).finally(release));
    return fresh;
  }

  async rollback(caller: Caller, row: DeployRow): Promise<DeployRow> {
    this.guard(row, 'rollback');
    const { fresh, release } = await this.moveHolding(row, ['succeeded', 'failed'], { state: 'rolling_back', reason: `rollback asked by ${caller.id}` });
    await this.record(caller.id, 'rollback_deployment', fresh, 'succeeded', {});
    this.track(this.undo(fresh, { source: 'manual', actor: caller.id }, 'rolled back on request').finally(release));
    return fresh;
  }

  private track(p: Promise<void>): void {
    const w = p.catch((err: Error) => this.log.error({ err: err.message }, 'deployment run failed'));
    this.running.add(w);
    void w.finally(() => this.running.delete(w));
  }

  private async appendStep(id: string, step: Step): Promise<void> {
    const row = await this.db<DeployRow>('automation_deployments').where({ id }).first();
    const steps = [...(JSON.parse(row!.steps) as Step[]), step];
    await this.db('automation_deployments').where({ id }).update({ steps: JSON.stringify(steps), updated_at: nowIso() });
    this.events.publish('deployment_step', { id, tenant_id: row!.tenant_id, ...step });
  }

  private async run(row: DeployRow, actorId: string): Promise<void> {
    const running = await this.move(row, ['queued'], { state: 'running' });
    const target = JSON.parse(running.target) as { nodes: number; threads_per_node: number };
    const actor = { source: 'automated' as const, actor: 'automation.deployment', cause: `deployment ${row.id} by ${actorId}` };
    try {
      const kernel = this.mesh.kernelOf(row.kernel_id);
      const settings = settingsOf(running, this.sealer) ?? kernel.settings;
      await this.rolling.converge(row.kernel_id, Array.from({ length: target.nodes }, () => ({ threads: target.threads_per_node, settings })), actor, (s) => this.appendStep(row.id, { ...s, phase: 'rollout' }));
      // Nodes added later (by hand, by a scaler) start with what was rolled out.
      kernel.settings = settings;
      const done = await this.move(running, ['running'], { state: 'succeeded' });
      await this.record('automation.deployment', 'deployment_succeeded', done, 'succeeded', {}, 'automated');
    } catch (err) {
      const why = err instanceof GateFailed ? err.message : `the rollout failed: ${(err as Error).message}`;
      const back = await this.move(running, ['running'], { state: 'rolling_back', reason: why });
      await this.record('automation.deployment', 'deployment_gate_failed', back, 'failed', { reason: why }, 'automated');
      await this.undo(back, actor, `rolled back automatically: ${why}`);
    }
  }

  /** Converges the kernel back to the node shape recorded before the rollout. */
  private async undo(row: DeployRow, actor: { source: 'manual' | 'automated'; actor: string; cause?: string }, reason: string): Promise<void> {
    const kernel = this.mesh.kernelOf(row.kernel_id);
    // Rows executed before settings could change kept only thread counts: the kernel's settings then.
    const before: { nodes: NodeSpec[]; kernel: Record<string, unknown> } = row.before_sealed
      ? JSON.parse(this.sealer.unseal(row.before_sealed))
      : { nodes: (JSON.parse(row.before ?? '[]') as Array<{ threads: number }>).map((b) => ({ threads: b.threads, settings: kernel.settings })), kernel: kernel.settings };
    try {
      kernel.settings = before.kernel;
      await this.rolling.converge(row.kernel_id, before.nodes, actor, (s) => this.appendStep(row.id, { ...s, phase: 'rollback' }));
      const done = await this.move(row, ['rolling_back'], { state: 'rolled_back', reason });
      await this.record(actor.actor, 'deployment_rolled_back', done, 'succeeded', { reason }, 'automated');
    } catch (err) {
      const done = await this.move(row, ['rolling_back'], { state: 'failed', reason: `${reason}; the rollback failed too: ${(err as Error).message}` });
      await this.record(actor.actor, 'deployment_rolled_back', done, 'failed', { error: (err as Error).message }, 'automated');
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.running]);
  }

  private record(actor: string, action: string, row: DeployRow, result: 'succeeded' | 'failed', detail: Record<string, unknown>, source: 'manual' | 'automated' = 'manual') {
    return this.actions.record({ source, actor, action, target_type: 'deployment', target_id: row.id, result, tenant_id: row.tenant_id, detail: { kernel_id: row.kernel_id, state: row.state, ...detail } });
  }
}
