import crypto from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import type { ActionLog } from '../actions';
import type { Config } from '../config';
import type { Db } from '../db';
import { HttpError, NotFound, Unavailable, Unprocessable, type ValidationIssue } from '../errors';
import type { EventBus } from '../events';
import type { ComponentHealth } from '../health';
import type { Logger } from '../logger';
import type { Caller } from '../roles';
import type { NodeControl, TaskFault, TaskResult } from '../../kernels/sdk';
import { toIssues } from '../http/validation';
import type { NodeState } from './types';
import type { CancelSignal } from './cancel';
import { discoverKernels } from './discovery';
import { combine, nodeHealth } from './health';
import { Kernel, NotCounted } from './kernel';
import type { ControlBus } from '../cluster/bus';
import { clusterStats } from '../cluster/stats';
import type { PeerHost, TaskForwarder } from '../cluster/forward';
import { MeshNode } from './node';
import { MeshControl } from './control';
import { OutcomeWriter, storeIncident, type HealthIncident } from './store';
import { overviewOf, statsOf } from './views';
import type { ActionActor, BreakerState, DrainStatus, Health, HostInfo, KernelView, MeshStats, NodeView, TaskInfo } from './types';

export type { ActionActor } from './types';

const DEFAULT_KERNEL_DIR = path.resolve(__dirname, '..', '..', 'kernels');

export interface RunOptions {
  /** Cancels the task (an AbortSignal, or a Cancel: see cancel.ts). */
  signal?: CancelSignal;
  timeoutMs?: number;
  caller?: Caller | null;
  /** Names an internal failure in the log and in the caller's 502 (one is made when absent). */
  requestId?: string;
}

/** A finished task as observers see it; tenant and caller are those the task was run for (usage metering). */
export interface TaskObservation {
  kernel: string;
  node: string;
  task: string;
  outcome: 'ok' | 'error' | 'aborted';
  tenantId: string | null;
  caller: Caller | null;
  /** Time the handler ran on its worker thread, ms (the whole dispatch when the worker did not answer). */
  runMs: number;
}

/** A task that failed in a way that counts against the kernel's health and breaker. */
class TaskFailed extends Error {
  constructor(
    readonly fault: TaskFault,
    readonly runMs: number | null,
  ) {
    super(fault.message);
  }
}

/** Counted failures: internal faults and a TaskError's 502/504 (a 503 says a dependency is missing, a 4xx blames the input). */
function counts(f: TaskFault): boolean {
  return f.kind === 'internal' || (f.kind === 'task' && (f.status === 502 || f.status === 504));
}

/**
 * The kernel mesh: kernels discovered from `kernels/*` run as nodes (Piscina pools);
 * tasks go to the least busy eligible node through the kernel's circuit breaker; health
 * is derived from heartbeats measured in the workers and from task outcomes.
 */
/** See Mesh.faults. */
export interface NodeFaults {
  readonly state: NodeState;
  readonly control: NodeControl | null;
  readonly threads: number;
  readonly inFlight: number;
  /** False once the node's threads were terminated (drained). */
  readonly hasThreads: boolean;
  /** Worker threads started (the first and every replacement), and threads that exited. */
  readonly threadStarts: number;
  readonly threadExits: number;
  liveThreadIds(): number[];
  /** Every live thread has sent a heartbeat (none is still booting). */
  allThreadsBeating(): boolean;
  /** Ends one idle thread (Piscina replaces it); false when none could be ended. */
  crashThread(signal?: AbortSignal): Promise<boolean>;
}

export class Mesh {
  /** Internal to core/mesh (control.ts reads them); elsewhere use kernelIds, faults and the views. */
  readonly kernelMap = new Map<string, Kernel>();
  readonly nodeMap = new Map<string, { node: MeshNode; kernel: Kernel }>();
  readonly cfg: Config['mesh'];
  readonly outcomesWriter: OutcomeWriter;
  /** Called for every finished task (metrics); `outcome` aborted = cancelled or refused, not counted against health. */
  readonly taskObservers: Array<(t: TaskObservation, durationMs: number) => void> = [];
  readonly control: MeshControl;
  globalHealth: { health: Health; reason: string } = { health: 'unknown', reason: 'starting' };
  /** This host's name in a cluster (part of node ids); null on a single host. */
  readonly hostId: string | null;
  /** Nodes of the other hosts of the cluster (core/cluster sets it); none on a single host. */
  remoteNodes: () => NodeView[] = () => [];
  /** The hosts of the cluster (core/cluster sets it); this host alone otherwise. */
  hosts: () => HostInfo[] = () => [{ host_id: null, url: null, started_at: this.startedAt, heartbeat_at: new Date().toISOString(), live: true, nodes: this.nodeMap.size, this_host: true, breakers: this.breakers() }];
  readonly startedAt = new Date().toISOString();
  /** Sends node actions to the host that runs the node (core/cluster sets it); null on a single host. */
  bus: ControlBus | null = null;
  /** Sends tasks to another host of the cluster (core/cluster sets it); null on a single host. */
  forwarder: TaskForwarder | null = null;
  private loop: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    config: Config,
    readonly db: Db,
    readonly events: EventBus,
    readonly actions: ActionLog,
    readonly log: Logger,
  ) {
    this.cfg = config.mesh;
    this.hostId = config.cluster.hostId && config.redis.url ? config.cluster.hostId : null;
    this.outcomesWriter = new OutcomeWriter(db, log, this.cfg.outcomes.flushMs, this.cfg.outcomes.batchSize);
    this.control = new MeshControl(this);
  }

  /** Finds the kernels and starts every node's threads. */
  async start(): Promise<void> {
    const dirs = this.cfg.kernelDirs.length ? this.cfg.kernelDirs : [DEFAULT_KERNEL_DIR];
    for (const found of discoverKernels(dirs)) {
      const { manifest } = found;
      if (this.cfg.only && !this.cfg.only.includes(manifest.domain)) continue;
      const kernel = new Kernel(manifest, found.workerFile, this.cfg.breaker);
      kernel.settings = this.cfg.settings[manifest.domain] ?? {};
      this.watchBreaker(kernel);
      this.kernelMap.set(kernel.id, kernel);
      const over = this.cfg.kernels[manifest.domain] ?? {};
      const nodes = over.nodes ?? this.cfg.nodesPerKernel ?? manifest.nodes;
      for (let i = 0; i < nodes; i++) this.createNode(kernel, over.threads ?? this.cfg.threadsPerNode ?? manifest.threadsPerNode);
    }
    this.loop = setInterval(() => void this.evaluate(), this.cfg.heartbeatMs);
    this.loop.unref();
  }

  createNode(kernel: Kernel, threads: number, settings: Record<string, unknown> = kernel.settings): MeshNode {
    const node = new MeshNode({
      id: this.hostId ? `${kernel.id}-${this.hostId}-${kernel.nextNodeNumber++}` : `${kernel.id}-${kernel.nextNodeNumber++}`,
      domain: kernel.id,
      host: this.hostId,
      workerFile: kernel.workerFile,
      threads,
      heartbeatMs: this.cfg.heartbeatMs,
      maxQueue: this.cfg.maxQueuePerNode,
      settings,
      onError: (err) => this.log.warn({ err: err.message, kernel: kernel.id }, 'kernel pool error'),
    });
    node.startPool();
    kernel.nodes.push(node);
    this.nodeMap.set(node.id, { node, kernel });
    return node;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.loop) clearInterval(this.loop);
    for (const k of this.kernelMap.values()) {
      k.shutdown();
      for (const n of k.nodes) if (n.drain?.timer) clearTimeout(n.drain.timer);
    }
    await Promise.allSettled([...this.nodeMap.values()].map(({ node }) => node.destroyPool()));
    await this.outcomesWriter.flush();
  }

  // ---- lookups and views ----

  /** The ids of every kernel, sorted. */
  kernelIds(): string[] {
    return [...this.kernelMap.keys()].sort();
  }

  hasKernel(id: string): boolean {
    return this.kernelMap.has(id);
  }

  /**
   * What a fault injector (chaos engineering) may read and do on one node: its state, its
   * control, its threads and their heartbeats, and ending one thread. Null for no such node.
   */
  faults(id: string): NodeFaults | null {
    const found = this.nodeMap.get(id);
    if (!found) return null;
    const node = found.node;
    return {
      get state() { return node.state; },
      get control() { return node.control; },
      get threads() { return node.threads; },
      get inFlight() { return node.inFlight; },
      get hasThreads() { return node.pool !== null; },
      get threadStarts() { return node.threadStarts; },
      get threadExits() { return node.threadExits; },
      liveThreadIds: () => [...node.liveThreads.keys()],
      allThreadsBeating: () => [...node.liveThreads.values()].every((r) => Boolean(r.beat)),
      crashThread: (signal?: AbortSignal) => node.crashThread(signal),
    };
  }

  kernelOf(id: string): Kernel {
    const k = this.kernelMap.get(id);
    if (!k) throw new NotFound(`Unknown kernel "${id}"; known: ${[...this.kernelMap.keys()].join(', ') || 'none'}`);
    return k;
  }

  nodeOf(id: string): { node: MeshNode; kernel: Kernel } {
    const n = this.nodeMap.get(id);
    if (!n) throw new NotFound(`Unknown node "${id}"`);
    return n;
  }

  kernelView(k: Kernel): KernelView {
    const remote = this.remoteNodes().filter((n) => n.kernel_id === k.id);
    const byState: Record<string, number> = k.nodesByState();
    for (const n of remote) byState[n.state] = (byState[n.state] ?? 0) + 1;
    return {
      id: k.id,
      domain: k.id,
      description: k.manifest.description,
      state: k.state(),
      health: k.health,
      reason: k.reason,
      breaker: { state: k.breakerState(), isolated: k.isOpen },
      slo: k.manifest.slo,
      tasks: Object.keys(k.manifest.tasks),
      nodes: [...k.nodes.map((n) => n.view(k.id)), ...remote],
      nodes_by_state: byState,
    };
  }

  kernels(): KernelView[] {
    return [...this.kernelMap.values()].map((k) => this.kernelView(k));
  }

  kernel(id: string): KernelView {
    return this.kernelView(this.kernelOf(id));
  }

  /**
   * Where a task of `domain` goes instead of here: another host, when this one has no active
   * node of the kernel (or does not run it) and a live host has one; null to run it here.
   */
  forwardTarget(domain: string): PeerHost | null {
    if (!this.forwarder) return null;
    const k = this.kernelMap.get(domain);
    if (k?.nodes.some((n) => n.state === 'active')) return null;
    const peer = this.forwarder.pick(domain);
    // Not run here and no active node anywhere: the kernel exists in the cluster but cannot take work.
    if (!peer && !k && this.remoteNodes().some((n) => n.kernel_id === domain)) throw new Unavailable(`No host of the cluster has an active node of kernel ${domain}`, 1, 'NO_ACTIVE_NODE');
    return peer;
  }

  /**
   * The host that runs `nodeId` when another host does (null: this host, or no such node, which
   * the local call answers with 404). A node of a host whose lease ran out is 409 NODE_HOST_LOST.
   */
  ownerOf(nodeId: string): string | null {
    if (this.nodeMap.has(nodeId)) return null;
    const remote = this.remoteNodes().find((n) => n.id === nodeId);
    if (!remote?.host) return null;
    if (remote.state === 'lost') throw new HttpError(409, `Node ${nodeId} ran on host ${remote.host}, which stopped heartbeating: ${remote.reason}`, {}, 'NODE_HOST_LOST');
    return remote.host;
  }

  /** This host's circuit breaker of each kernel. */
  breakers(): Record<string, { state: BreakerState; isolated: boolean }> {
    return Object.fromEntries([...this.kernelMap.values()].map((k) => [k.id, { state: k.breakerState(), isolated: k.isOpen }]));
  }

  /** This host's nodes only. */
  localNodes(): NodeView[] {
    return [...this.nodeMap.values()].map(({ node, kernel }) => node.view(kernel.id));
  }

  /** Every node of the cluster: this host's, then the other hosts' as their last heartbeat showed them. */
  nodes(): NodeView[] {
    return [...this.localNodes(), ...this.remoteNodes()];
  }

  node(id: string): NodeView {
    const local = this.nodeMap.get(id);
    if (local) return local.node.view(local.kernel.id);
    const remote = this.remoteNodes().find((n) => n.id === id);
    if (remote) return remote;
    throw new NotFound(`Unknown node "${id}"`);
  }

  /** Task catalogues by kernel: manifests do not change, and converting schemas is not cheap. */
  private readonly catalogues = new Map<string, TaskInfo[]>();

  catalogue(domain: string): TaskInfo[] {
    const k = this.kernelOf(domain);
    const known = this.catalogues.get(k.id);
    if (known) return known;
    const list = Object.entries(k.manifest.tasks).map(([name, t]) => ({
      name,
      summary: t.summary,
      input_schema: z.toJSONSchema(t.input, { io: 'input', unrepresentable: 'any' }),
      output_schema: z.toJSONSchema(t.output, { io: 'output', unrepresentable: 'any' }),
    }));
    this.catalogues.set(k.id, list);
    return list;
  }

  private taskDef(domain: string, task: string) {
    const k = this.kernelOf(domain);
    const def = Object.hasOwn(k.manifest.tasks, task) ? k.manifest.tasks[task] : undefined;
    if (!def) throw new NotFound(`Kernel "${domain}" has no task "${task}"; tasks: ${Object.keys(k.manifest.tasks).join(', ')}`);
    return { k, def };
  }

  validateInput(domain: string, task: string, input: unknown): ValidationIssue[] {
    const { def } = this.taskDef(domain, task);
    const r = def.input.safeParse(input);
    return r.success ? [] : toIssues('body', r.error, input, def.input);
  }

  /** Why a kernel cannot take a task now, for the 503. */
  private whyUnavailable(k: Kernel): string {
    if (k.nodes.length === 0) return `kernel "${k.id}" has no nodes`;
    const s = k.nodesByState();
    if (s.active === 0) return `kernel "${k.id}" has no active node (paused ${s.paused}, draining ${s.draining}, drained ${s.drained})`;
    return `every active node of kernel "${k.id}" is full`;
  }

  // ---- running tasks ----

  /**
   * Admission checks of a caller's task (per-tenant kernel quotas): each throws (or rejects) to
   * refuse, or returns (or resolves to) what to call when the task ends. Only tasks that carry a caller are checked.
   */
  readonly admitters: Array<(domain: string, caller: Caller) => (() => void) | void | Promise<(() => void) | void>> = [];

  async run(domain: string, task: string, input: unknown, opts: RunOptions = {}): Promise<unknown> {
    if (!this.admitters.length || !opts.caller) return this.dispatch(domain, task, input, opts);
    const releases: Array<() => void> = [];
    try {
      for (const admit of this.admitters) {
        const release = await admit(domain, opts.caller);
        if (release) releases.push(release);
      }
      return await this.dispatch(domain, task, input, opts);
    } finally {
      for (const release of releases) release();
    }
  }

  private async dispatch(domain: string, task: string, input: unknown, opts: RunOptions): Promise<unknown> {
    const { k, def } = this.taskDef(domain, task);
    const parsed = def.input.safeParse(input);
    if (!parsed.success) throw new Unprocessable(toIssues('body', parsed.error, input, def.input));
    if (k.isOpen) throw new Unavailable(`kernel "${k.id}" is isolated: its circuit breaker is open`, Math.ceil(this.cfg.breaker.resetTimeoutMs / 1000));
    const t0 = performance.now();
    const node = k.pick() ?? (await k.waitForNode(this.cfg.noNodeWaitMs, opts.signal));
    if (!node) throw new Unavailable(`${this.whyUnavailable(k)}; waited ${this.cfg.noNodeWaitMs} ms`, 1);
    const timeoutMs = opts.timeoutMs ?? this.cfg.taskTimeoutMs;
    let timedOut = false;
    const dispatched = performance.now();
    const finish = (ok: boolean, error: string | null, runMs: number | null) => {
      const end = performance.now();
      const total = end - dispatched;
      const run = runMs ?? total;
      node.record(ok, total, this.cfg.health.windowSeconds * 1000);
      k.runTime.record(Math.max(1, Math.round(run * 1000)));
      k.waitTime.record(Math.max(1, Math.round((end - t0 - run) * 1000)));
      this.outcomesWriter.add({ kernel_id: k.id, node_id: node.id, task, ok, duration_ms: Math.round(total * 1000) / 1000, wait_ms: Math.round((end - t0 - run) * 1000) / 1000, error, tenant_id: opts.caller?.tenantId ?? null, at: new Date().toISOString() });
      if (this.taskObservers.length) {
        const seen: TaskObservation = { kernel: k.id, node: node.id, task, outcome: ok ? (error ? 'aborted' : 'ok') : 'error', tenantId: opts.caller?.tenantId ?? null, caller: opts.caller ?? null, runMs: run };
        for (const observe of this.taskObservers) observe(seen, total);
      }
      k.notify();
      if (node.state === 'draining') this.control.onDrainTaskDone(node, k);
    };
    let result: TaskResult;
    try {
      result = (await k.breaker.fire(async () => {
        let r: TaskResult;
        try {
          r = await node.run(task, parsed.data, opts.signal, timeoutMs, () => (timedOut = true));
        } catch (err) {
          if (opts.signal?.aborted) throw new NotCounted(new Unavailable('the task was cancelled'));
          if (timedOut) throw new Unavailable(`the task did not finish within ${timeoutMs} ms and was aborted`);
          if (node.state === 'drained') throw new NotCounted(new Unavailable(`node ${node.id} was drained by force while the task ran`));
          throw new TaskFailed({ kind: 'internal', message: `worker thread: ${(err as Error).message}`, stack: (err as Error).stack }, null);
        }
        if (!r.ok) throw counts(r.error) ? new TaskFailed(r.error, r.run_ms) : new NotCounted(r);
        return r;
      })) as TaskResult;
    } catch (err) {
      throw this.failure(err, finish, { kernel: k.id, node: node.id, task, input, schema: def.input, requestId: opts.requestId });
    }
    finish(true, null, result.run_ms);
    return (result as { output: unknown }).output;
  }

  /** Maps a failed dispatch to the error the caller gets, recording its outcome. */
  private failure(err: unknown, finish: (ok: boolean, error: string | null, runMs: number | null) => void, at: { kernel: string; node: string; task: string; input: unknown; schema: z.ZodType; requestId?: string }): Error {
    const e = err instanceof NotCounted ? err.cause : err;
    if ((e as { code?: string })?.code === 'EOPENBREAKER') {
      return new Unavailable('the kernel is isolated: its circuit breaker is open', Math.ceil(this.cfg.breaker.resetTimeoutMs / 1000));
    }
    if (e instanceof TaskFailed) {
      if (e.fault.kind === 'task') {
        finish(false, e.message, e.runMs);
        return new HttpError(e.fault.status, e.fault.message, {}, e.fault.code);
      }
      return this.internal(e.fault, finish, e.runMs, at);
    }
    if (e instanceof HttpError) {
      finish(!(e.status === 502 || /did not finish/.test(e.message)), e.message, null);
      return e;
    }
    const r = e as TaskResult;
    if (r && r.ok === false) {
      const f = r.error;
      finish(true, f.message, r.run_ms);
      if (f.kind === 'input') return new Unprocessable(toIssues('body', { issues: f.issues as z.core.$ZodIssue[] }, at.input, at.schema));
      if (f.kind === 'task' && f.status === 422) return new Unprocessable([{ loc: ['body', ...f.loc], msg: f.message, type: 'value_error' }], f.code);
      if (f.kind === 'task') return f.status === 503 ? new Unavailable(f.message, undefined, f.code) : new HttpError(f.status, f.message, {}, f.code);
    }
    return this.internal({ kind: 'internal', message: (e as Error)?.message ?? String(e), stack: (e as Error)?.stack }, finish, null, at);
  }

  /**
   * A fault the caller must not read (a handler's own exception, a dead worker, output that
   * breaks its schema): the worker's message and stack go to the log under the request id,
   * and the caller and the outcome record get only that id.
   */
  private internal(f: TaskFault, finish: (ok: boolean, error: string | null, runMs: number | null) => void, runMs: number | null, at: { kernel: string; node: string; task: string; requestId?: string }): Error {
    const requestId = at.requestId ?? crypto.randomUUID();
    this.log.error({ kernel: at.kernel, node: at.node, task: at.task, reqId: requestId, err: { message: f.message, stack: f.kind === 'internal' ? f.stack : undefined } }, 'kernel task failed');
    const detail = `the task failed with an internal error (request id ${requestId}; the host log has the details)`;
    finish(false, detail, runMs);
    return new HttpError(502, detail, {}, 'TASK_INTERNAL_ERROR');
  }

  /** A real round trip to a worker of the kernel (not counted in task stats). */
  async ping(domain: string, timeoutMs = 5000): Promise<{ ok: boolean; node_id: string | null; thread_id: number | null; latency_ms: number | null; reason: string }> {
    const k = this.kernelOf(domain);
    if (k.isOpen) return { ok: false, node_id: null, thread_id: null, latency_ms: null, reason: 'circuit breaker open' };
    const node = k.pick();
    if (!node) return { ok: false, node_id: null, thread_id: null, latency_ms: null, reason: this.whyUnavailable(k) };
    const t0 = performance.now();
    try {
      const r = await node.run('__ping', null, undefined, timeoutMs);
      // The node's control (fault injection) applies to pings: an injected error answers as a value.
      if (!r.ok) return { ok: false, node_id: node.id, thread_id: r.thread_id, latency_ms: Math.round((performance.now() - t0) * 1000) / 1000, reason: `the worker answered with an error: ${r.error.message}` };
      return { ok: true, node_id: node.id, thread_id: r.thread_id, latency_ms: Math.round((performance.now() - t0) * 1000) / 1000, reason: 'a worker answered' };
    } catch (err) {
      return { ok: false, node_id: node.id, thread_id: null, latency_ms: null, reason: `no answer: ${(err as Error).message}` };
    }
  }

  /**
   * The kernel's self-test on a scratch worker started with `settings` (one thread, not part of
   * the mesh, ended after): whether the kernel can work with settings before any node runs them.
   */
  async selfTest(domain: string, settings: Record<string, unknown>, timeoutMs = 10_000): Promise<{ ok: boolean; detail: string }> {
    const k = this.kernelOf(domain);
    const scratch = new MeshNode({
      id: `${k.id}-selftest-${crypto.randomUUID().slice(0, 8)}`, domain: k.id, host: this.hostId, workerFile: k.workerFile, threads: 1,
      heartbeatMs: this.cfg.heartbeatMs, maxQueue: 1, settings, onError: (err) => this.log.warn({ err: err.message, kernel: k.id }, 'self-test worker error'),
    });
    scratch.startPool();
    try {
      return await scratch.selfTest(timeoutMs);
    } finally {
      await scratch.destroyPool();
    }
  }

  setControl(nodeId: string, control: NodeControl | null): NodeView {
    const { node, kernel } = this.nodeOf(nodeId);
    node.control = control && Object.keys(control).length ? { ...control } : null;
    // Background CPU stress reaches idle threads too, through the node's shared buffer.
    node.setStress(node.control?.cpu_share ?? 0, node.control?.cpu_period_ms ?? 100);
    return node.view(kernel.id);
  }

  /** Ends one worker thread of a node (chaos); the pool replaces it. False when the node has no threads. */
  crashThread(nodeId: string, signal?: AbortSignal): Promise<boolean> {
    return this.nodeOf(nodeId).node.crashThread(signal);
  }

  // ---- health ----

  /** Re-derives every node's, kernel's and the mesh's health; publishes and stores changes. */
  async evaluate(): Promise<void> {
    if (this.stopped) return;
    const changes: Array<Omit<HealthIncident, 'id'>> = [];
    for (const k of this.kernelMap.values()) {
      for (const n of k.nodes) {
        const h = nodeHealth(n, k.manifest.slo, this.cfg);
        if (h.health !== n.health) {
          const previous = n.health;
          n.health = h.health;
          n.reason = h.reason;
          this.events.publish('health_update', { kernel_id: k.id, node_id: n.id, domain: k.id, health: h.health, previous, reason: h.reason });
          changes.push({ kernel_id: k.id, node_id: n.id, health: h.health, previous, reason: h.reason, at: new Date().toISOString() });
        } else n.reason = h.reason;
      }
      const kh = k.isOpen ? { health: 'unhealthy' as Health, reason: 'circuit breaker open: the kernel is isolated' } : combine(k.nodes.map((n) => ({ id: n.id, health: n.health, reason: n.reason })));
      if (kh.health !== k.health) {
        const previous = k.health;
        k.health = kh.health;
        k.reason = kh.reason;
        this.events.publish('health_update', { kernel_id: k.id, node_id: null, domain: k.id, health: kh.health, previous, reason: kh.reason });
        changes.push({ kernel_id: k.id, node_id: null, health: kh.health, previous, reason: kh.reason, at: new Date().toISOString() });
      } else k.reason = kh.reason;
    }
    this.globalHealth = combine([...this.kernelMap.values()].map((k) => ({ id: k.id, health: k.health, reason: k.reason })));
    const bad = (h: Health) => h === 'degraded' || h === 'unhealthy';
    for (const c of changes.filter((c) => bad(c.health) || bad(c.previous))) {
      await storeIncident(this.db, c).catch((err: Error) => this.log.warn({ err: err.message }, 'health incident not stored'));
    }
  }

  /** The `kernels` component of /health/. */
  async probe(): Promise<ComponentHealth> {
    const g = this.globalHealth;
    return {
      status: g.health,
      detail: { reason: g.reason, kernels: Object.fromEntries([...this.kernelMap.values()].map((k) => [k.id, k.health])), nodes: this.nodeMap.size },
    };
  }

  /** Newest first; `after` is the [at, id] of the last row of the previous page. */
  async incidents(opts: { kernelId?: string; limit: number; since?: string; after?: [string, string] }): Promise<HealthIncident[]> {
    const q = this.db('health_incidents').orderBy([{ column: 'at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(opts.limit);
    if (opts.kernelId) q.where('kernel_id', opts.kernelId);
    if (opts.since) q.where('at', '>=', opts.since);
    if (opts.after) {
      const [at, id] = opts.after;
      q.where((w) => w.where('at', '<', at).orWhere((x) => x.where('at', at).andWhere('id', '<', id)));
    }
    return q;
  }

  outcomes(domain: string, sinceIso: string) {
    this.kernelOf(domain);
    return this.outcomesWriter.outcomes(domain, sinceIso);
  }

  overview() {
    return overviewOf(this);
  }

  /** This host's counters and timings. */
  stats(): MeshStats {
    return statsOf(this);
  }

  /** Every live host's counters and timings, merged (this host's alone on a single host). */
  clusterStats(): Promise<MeshStats & { hosts: string[] }> {
    return clusterStats(this);
  }

  // ---- breaker events ----

  private watchBreaker(k: Kernel): void {
    const publish = () => this.events.publish('breaker_state', { kernel_id: k.id, state: k.breakerState(), isolated: k.isOpen });
    k.breaker.on('open', () => {
      publish();
      const s = k.breaker.stats;
      void this.record({ source: 'automated', actor: 'breaker', cause: `${s.failures} failures of ${s.fires} tasks in the rolling window` }, 'isolate_kernel', 'kernel', k.id, 'succeeded', {}).catch(() => undefined);
      void this.evaluate();
    });
    k.breaker.on('halfOpen', publish);
    k.breaker.on('close', () => {
      publish();
      k.notify();
      void this.record({ source: 'automated', actor: 'breaker', cause: 'a trial task succeeded' }, 'restore_kernel', 'kernel', k.id, 'succeeded', {}).catch(() => undefined);
      void this.evaluate();
    });
  }

  record(actor: ActionActor, action: string, targetType: string, targetId: string, result: 'succeeded' | 'failed' | 'refused', detail: Record<string, unknown>) {
    return this.actions.record({ source: actor.source, actor: actor.actor, cause: actor.cause ?? null, action, target_type: targetType, target_id: targetId, result, detail });
  }

  // ---- control (see control.ts) ----

  pauseNode(id: string, actor: ActionActor) { return this.control.pauseNode(id, actor); }
  resumeNode(id: string, actor: ActionActor) { return this.control.resumeNode(id, actor); }
  drainNode(id: string, opts: { deadline_seconds?: number; force?: boolean }, actor: ActionActor) { return this.control.drainNode(id, opts, actor); }
  completeDrain(id: string, opts: { force?: boolean }, actor: ActionActor) { return this.control.completeDrain(id, opts, actor); }
  abortDrain(id: string, actor: ActionActor) { return this.control.abortDrain(id, actor); }
  /** A read: the actor (accepted for symmetry with the other calls) is not recorded. */
  drainStatus(id: string, _actor?: ActionActor): DrainStatus { return this.nodeOf(id).node.drainStatus(); }
  pauseKernel(id: string, actor: ActionActor) { return this.control.kernelAction('pause', id, {}, actor); }
  resumeKernel(id: string, actor: ActionActor) { return this.control.kernelAction('resume', id, {}, actor); }
  drainKernel(id: string, opts: { deadline_seconds?: number; force?: boolean }, actor: ActionActor) { return this.control.kernelAction('drain', id, opts, actor); }
  addNode(kernelId: string, actor: ActionActor, threads?: number, settings?: Record<string, unknown>) { return this.control.addNode(kernelId, actor, threads, settings); }
  removeNode(nodeId: string, actor: ActionActor) { return this.control.removeNode(nodeId, actor); }
  setThreads(nodeId: string, n: number, actor: ActionActor) { return this.control.setThreads(nodeId, n, actor); }
  isolateKernel(id: string, actor: ActionActor) { return this.control.isolate(id, true, actor); }
  restoreKernel(id: string, actor: ActionActor) { return this.control.isolate(id, false, actor); }
}
