import { Conflict, invalid } from '../errors';
import type { Kernel } from './kernel';
import type { Mesh } from './mesh';
import type { MeshNode } from './node';
import type { ActionActor, DrainStatus, NodeState, NodeView } from './types';

type NodeAction = 'pause' | 'resume' | 'drain';

/** Why `action` is refused in `state`, or null when DESIGN §5 allows it. */
export function refusal(action: NodeAction | 'complete' | 'abort', state: NodeState, id: string, busy = false): string | null {
  if (busy) return `Node ${id} is terminating its threads; try again in a moment`;
  const allowed: Record<string, NodeState[]> = { pause: ['active'], resume: ['paused', 'drained'], drain: ['active', 'paused'], complete: ['draining'], abort: ['draining'] };
  if (allowed[action].includes(state)) return null;
  const why: Record<string, Partial<Record<NodeState, string>>> = {
    pause: { paused: 'is already paused', draining: 'is draining; abort the drain first', drained: 'is drained; resume it to start fresh threads' },
    resume: { active: 'is already active', draining: 'is draining; use drain/abort to return it to active' },
    drain: { draining: 'is already draining', drained: 'is already drained' },
    complete: { active: 'has no drain in progress (active)', paused: 'has no drain in progress (paused)', drained: 'is already drained' },
    abort: { active: 'has no drain in progress (active)', paused: 'has no drain in progress (paused)', drained: 'is already drained; resume it instead' },
  };
  return `Node ${id} ${why[action][state]}`;
}

/** Node and kernel control (DESIGN §5): every action is recorded and emitted as events. */
export class MeshControl {
  constructor(private readonly mesh: Mesh) {}

  private move(node: MeshNode, kernel: Kernel, to: NodeState): void {
    const before = kernel.state();
    const previous = node.setState(to);
    this.mesh.events.publish('node_state', { node_id: node.id, kernel_id: kernel.id, state: to, previous });
    const after = kernel.state();
    if (after !== before) this.mesh.events.publish('kernel_state', { kernel_id: kernel.id, state: after, previous: before });
    kernel.notify();
  }

  private async refuse(actor: ActionActor, action: string, type: string, id: string, reason: string): Promise<never> {
    await this.mesh.record(actor, action, type, id, 'refused', { reason });
    throw new Conflict(reason);
  }

  private progress(node: MeshNode): void {
    const s = node.drainStatus();
    this.mesh.events.publish('drain_progress', { node_id: node.id, in_flight: s.in_flight, completed: s.completed, progress: s.progress, overdue: s.overdue });
  }

  // Each primitive changes one node, without recording; the public methods record.
  private async apply(action: NodeAction, node: MeshNode, kernel: Kernel, opts: { deadline_seconds?: number; force?: boolean }, actor: ActionActor): Promise<void> {
    if (action === 'pause') return this.move(node, kernel, 'paused');
    if (action === 'resume') {
      if (node.state === 'drained') {
        // A drained node comes back with fresh threads.
        node.drain = null;
        node.samples = [];
        node.health = 'unknown';
        node.reason = 'starting: no heartbeat yet';
        node.startPool();
      }
      return this.move(node, kernel, 'active');
    }
    const seconds = opts.deadline_seconds ?? this.mesh.cfg.drainDeadlineSeconds;
    const now = Date.now();
    node.drain = { startedAt: now, deadline: now + seconds * 1000, force: opts.force ?? false, doneAtStart: node.tasksRun + node.tasksFailed, overdue: false, timer: null, completedAt: null };
    const drain = node.drain;
    drain.timer = setTimeout(() => void this.onDeadline(node, kernel, drain, actor), seconds * 1000);
    drain.timer.unref();
    this.move(node, kernel, 'draining');
    this.progress(node);
  }

  private async onDeadline(node: MeshNode, kernel: Kernel, drain: NonNullable<MeshNode['drain']>, actor: ActionActor): Promise<void> {
    if (node.drain !== drain || node.state !== 'draining') return;
    drain.timer = null;
    const auto: ActionActor = { source: 'automated', actor: 'mesh', cause: `drain deadline reached (drain started by ${actor.actor})` };
    if (node.inFlight === 0 || drain.force) {
      await this.finish(node, kernel, drain.force).catch(() => undefined);
      await this.mesh.record(auto, 'complete_drain', 'node', node.id, 'succeeded', { forced: drain.force && node.inFlight > 0 }).catch(() => undefined);
      return;
    }
    drain.overdue = true;
    this.progress(node);
  }

  /** Called after every task a draining node finishes. */
  onDrainTaskDone(node: MeshNode, kernel: Kernel): void {
    this.progress(node);
    const drain = node.drain;
    if (drain?.overdue && node.inFlight === 0 && node.state === 'draining') {
      const auto: ActionActor = { source: 'automated', actor: 'mesh', cause: 'overdue drain: the last task finished' };
      void this.finish(node, kernel, false)
        .then(() => this.mesh.record(auto, 'complete_drain', 'node', node.id, 'succeeded', {}))
        .catch(() => undefined);
    }
  }

  /** Ends a drain: the node's threads are terminated (running tasks abort when forced). */
  private async finish(node: MeshNode, kernel: Kernel, force: boolean): Promise<void> {
    const aborted = node.inFlight;
    if (node.drain?.timer) clearTimeout(node.drain.timer);
    if (node.drain) node.drain.completedAt = Date.now();
    const before = kernel.state();
    const previous = node.setState('drained');
    node.busy = true;
    try {
      await node.destroyPool();
    } finally {
      node.busy = false;
    }
    node.health = 'unknown';
    node.reason = 'drained: the node has no threads';
    this.mesh.events.publish('node_state', { node_id: node.id, kernel_id: kernel.id, state: 'drained', previous, aborted_tasks: force ? aborted : 0 });
    const after = kernel.state();
    if (after !== before) this.mesh.events.publish('kernel_state', { kernel_id: kernel.id, state: after, previous: before });
    this.progress(node);
  }

  async nodeAction(action: NodeAction, id: string, opts: { deadline_seconds?: number; force?: boolean }, actor: ActionActor): Promise<NodeView> {
    const { node, kernel } = this.mesh.nodeOf(id);
    const why = refusal(action, node.state, id, node.busy);
    if (why) return this.refuse(actor, `${action}_node`, 'node', id, why);
    const previous = node.state;
    await this.apply(action, node, kernel, opts, actor);
    await this.mesh.record(actor, `${action}_node`, 'node', id, 'succeeded', { previous, state: node.state, ...opts });
    return node.view(kernel.id);
  }

  pauseNode(id: string, actor: ActionActor) { return this.nodeAction('pause', id, {}, actor); }
  resumeNode(id: string, actor: ActionActor) { return this.nodeAction('resume', id, {}, actor); }

  async drainNode(id: string, opts: { deadline_seconds?: number; force?: boolean }, actor: ActionActor): Promise<DrainStatus> {
    await this.nodeAction('drain', id, opts, actor);
    return this.mesh.nodeOf(id).node.drainStatus();
  }

  async completeDrain(id: string, opts: { force?: boolean }, actor: ActionActor): Promise<NodeView> {
    const { node, kernel } = this.mesh.nodeOf(id);
    const why = refusal('complete', node.state, id, node.busy);
    if (why) return this.refuse(actor, 'complete_drain', 'node', id, why);
    const inFlight = node.inFlight;
    if (inFlight > 0 && !opts.force) {
      return this.refuse(actor, 'complete_drain', 'node', id, `Node ${id} has ${inFlight} task(s) in flight; wait for them (see drain/status) or complete with force to abort them`);
    }
    await this.finish(node, kernel, opts.force ?? false);
    await this.mesh.record(actor, 'complete_drain', 'node', id, 'succeeded', { force: opts.force ?? false, aborted_tasks: opts.force ? inFlight : 0 });
    return node.view(kernel.id);
  }

  async abortDrain(id: string, actor: ActionActor): Promise<NodeView> {
    const { node, kernel } = this.mesh.nodeOf(id);
    const why = refusal('abort', node.state, id, node.busy);
    if (why) return this.refuse(actor, 'abort_drain', 'node', id, why);
    if (node.drain?.timer) clearTimeout(node.drain.timer);
    node.drain = null;
    this.move(node, kernel, 'active');
    await this.mesh.record(actor, 'abort_drain', 'node', id, 'succeeded', {});
    return node.view(kernel.id);
  }

  /** Acts on every node of a kernel that allows it; 409 when none does. */
  async kernelAction(action: NodeAction, id: string, opts: { deadline_seconds?: number; force?: boolean }, actor: ActionActor) {
    const kernel = this.mesh.kernelOf(id);
    const changed: string[] = [];
    const skipped: Array<{ node_id: string; reason: string }> = [];
    for (const node of kernel.nodes) {
      const why = refusal(action, node.state, node.id, node.busy);
      if (why) skipped.push({ node_id: node.id, reason: why });
      else {
        await this.apply(action, node, kernel, opts, actor);
        changed.push(node.id);
      }
    }
    if (changed.length === 0) {
      const reason = kernel.nodes.length ? `No node of kernel ${id} can ${action}: ${skipped.map((s) => s.reason).join('; ')}` : `Kernel ${id} has no nodes`;
      return this.refuse(actor, `${action}_kernel`, 'kernel', id, reason);
    }
    await this.mesh.record(actor, `${action}_kernel`, 'kernel', id, 'succeeded', { nodes: changed, skipped, ...opts });
    return { kernel: this.mesh.kernelView(kernel), changed, skipped };
  }

  /** `settings`: the new node's own (a deployment rolling new settings out); the kernel's otherwise. */
  async addNode(kernelId: string, actor: ActionActor, threads?: number, settings?: Record<string, unknown>): Promise<NodeView> {
    const kernel = this.mesh.kernelOf(kernelId);
    if (threads !== undefined && (!Number.isInteger(threads) || threads < 1 || threads > 64)) throw invalid(['body', 'threads'], 'threads must be a whole number from 1 to 64');
    const wanted = threads ?? this.mesh.cfg.threadsPerNode ?? kernel.manifest.threadsPerNode;
    const { maxNodesPerKernel } = this.mesh.cfg;
    if (kernel.nodes.length >= maxNodesPerKernel) return this.refuse(actor, 'add_node', 'kernel', kernelId, `Kernel ${kernelId} has ${kernel.nodes.length} nodes, the most mesh.maxNodesPerKernel allows`);
    const budget = this.threadBudgetLeft();
    if (wanted > budget) return this.refuse(actor, 'add_node', 'kernel', kernelId, `${wanted} more threads would pass mesh.maxThreads (${budget} left)`);
    const node = this.mesh.createNode(kernel, wanted, settings);
    this.mesh.events.publish('node_state', { node_id: node.id, kernel_id: kernel.id, state: 'active', previous: null });
    await this.mesh.record(actor, 'add_node', 'node', node.id, 'succeeded', { kernel_id: kernel.id, threads: node.threads });
    return node.view(kernel.id);
  }

  /** Threads the mesh may still start: mesh.maxThreads less those of every node not drained. */
  private threadBudgetLeft(): number {
    let used = 0;
    for (const { node } of this.mesh.nodeMap.values()) if (node.state !== 'drained') used += node.threads;
    return Math.max(0, this.mesh.cfg.maxThreads - used);
  }

  async removeNode(nodeId: string, actor: ActionActor): Promise<void> {
    const { node, kernel } = this.mesh.nodeOf(nodeId);
    if (node.state !== 'drained' || node.busy) return this.refuse(actor, 'remove_node', 'node', nodeId, `Node ${nodeId} is ${node.busy ? 'terminating its threads' : node.state}; drain it before removing it`);
    kernel.nodes.splice(kernel.nodes.indexOf(node), 1);
    this.mesh.nodeMap.delete(nodeId);
    this.mesh.events.publish('node_state', { node_id: nodeId, kernel_id: kernel.id, state: 'removed', previous: 'drained' });
    await this.mesh.record(actor, 'remove_node', 'node', nodeId, 'succeeded', { kernel_id: kernel.id });
  }

  /** New thread count: a running node gets a new pool at once; the old one finishes its tasks and closes. */
  async setThreads(nodeId: string, n: number, actor: ActionActor): Promise<NodeView> {
    const { node, kernel } = this.mesh.nodeOf(nodeId);
    if (!Number.isInteger(n) || n < 1 || n > 64) throw invalid(['body', 'threads'], 'threads must be a whole number from 1 to 64');
    const previous = node.threads;
    const budget = this.threadBudgetLeft() + (node.state === 'drained' ? 0 : previous);
    if (n > budget) return this.refuse(actor, 'set_threads', 'node', nodeId, `${n} threads would pass mesh.maxThreads (${budget} available to this node)`);
    node.threads = n;
    if (node.pool && node.state !== 'drained') node.replacePool();
    kernel.notify();
    await this.mesh.record(actor, 'set_threads', 'node', nodeId, 'succeeded', { previous, threads: n });
    return node.view(kernel.id);
  }

  async isolate(id: string, on: boolean, actor: ActionActor) {
    const kernel = this.mesh.kernelOf(id);
    if (on && kernel.isolated) return this.refuse(actor, 'isolate_kernel', 'kernel', id, `Kernel ${id} is already isolated`);
    if (!on && !kernel.isOpen) return this.refuse(actor, 'restore_kernel', 'kernel', id, `Kernel ${id} is not isolated`);
    kernel.isolated = on;
    if (!on && kernel.breaker.opened) kernel.breaker.close();
    this.mesh.events.publish('breaker_state', { kernel_id: id, state: kernel.breakerState(), isolated: kernel.isOpen });
    kernel.notify();
    await this.mesh.record(actor, on ? 'isolate_kernel' : 'restore_kernel', 'kernel', id, 'succeeded', {});
    void this.mesh.evaluate();
    return this.mesh.kernelView(kernel);
  }
}
