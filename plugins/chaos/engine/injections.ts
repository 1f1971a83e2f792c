// Applying and removing the faults of an experiment on real nodes of the mesh. Control
// faults (latency, error, cpu_stress) go through mesh.setControl and travel to the workers;
// node_pause goes through the mesh's own pause/resume; worker_crash ends worker threads.
import crypto from 'node:crypto';
import { Conflict } from '../../../core/errors';
import type { Mesh } from '../../../core/mesh/mesh';
import type { ActionActor, NodeView } from '../../../core/mesh/types';
import type { NodeControl } from '../../../kernels/sdk';
import type { InjectionType, Parameters } from './schemas';

export interface Planned {
  id: string;
  node_id: string;
  domain: string;
  kind: InjectionType;
  detail: Record<string, unknown>;
  applied: boolean;
  rolledBack: boolean;
}

/**
 * The nodes of `domain` on every host of the cluster (lost ones aside); 404 when no host runs
 * the kernel.
 */
export function clusterNodes(mesh: Mesh, domain: string): NodeView[] {
  const nodes = mesh.nodes().filter((n) => n.kernel_id === domain && n.state !== 'lost');
  if (nodes.length === 0 && !mesh.remoteNodes().some((n) => n.kernel_id === domain)) mesh.kernelOf(domain);
  return nodes;
}

/** Picks the nodes of each domain that get the fault, on any host: a random ceil(share × n), capped by max_nodes, at least one. */
export function plan(mesh: Mesh, kind: InjectionType, domains: string[], p: Parameters): Planned[] {
  const out: Planned[] = [];
  for (const domain of domains) {
    const all = clusterNodes(mesh, domain);
    // A paused node cannot be paused again; the other faults need threads (another host's node has them unless drained).
    const nodes = all.filter((n) => (kind === 'node_pause' ? n.state === 'active' : n.state !== 'drained' && (n.host === mesh.hostId ? mesh.faults(n.id)?.hasThreads : true)));
    if (nodes.length === 0) throw new Conflict(`Kernel ${domain} has no node the ${kind} fault can act on (nodes: ${all.map((n) => `${n.id} ${n.state}`).join(', ') || 'none'})`);
    const want = Math.min(nodes.length, p.max_nodes ?? 64, Math.max(1, Math.ceil((p.node_share ?? 1) * nodes.length - 1e-9)));
    const shuffled = nodes.map((n) => ({ n, k: crypto.randomInt(2 ** 47) })).sort((a, b) => a.k - b.k).map((x) => x.n);
    for (const n of shuffled.slice(0, want)) out.push({ id: crypto.randomUUID(), node_id: n.id, domain, kind, detail: {}, applied: false, rolledBack: false });
  }
  return out;
}

/** What chaos reads of a node, wherever it runs. */
export interface FaultState {
  state: string;
  control: NodeControl | null;
  threads: number;
  inFlight: number;
  hasThreads: boolean;
  threadStarts: number;
  threadExits: number;
  liveThreadIds: number[];
  allBeating: boolean;
}

/** The node's fault state on this host; null when this host does not run it. */
export function localState(mesh: Mesh, nodeId: string): FaultState | null {
  const n = mesh.faults(nodeId);
  if (!n) return null;
  return { state: n.state, control: n.control, threads: n.threads, inFlight: n.inFlight, hasThreads: n.hasThreads, threadStarts: n.threadStarts, threadExits: n.threadExits, liveThreadIds: n.liveThreadIds(), allBeating: n.allThreadsBeating() };
}

/** The node control a fault sets, or null for faults that are not control state. */
export function controlOf(kind: InjectionType, p: Parameters): NodeControl | null {
  if (kind === 'latency') return { latency_ms: p.latency_ms, ...(p.jitter_ms ? { latency_jitter_ms: p.jitter_ms } : {}), ...(p.task_share !== undefined && p.task_share < 1 ? { latency_share: p.task_share } : {}) };
  if (kind === 'error') return { error_rate: p.error_rate };
  if (kind === 'cpu_stress') return { cpu_share: p.cpu_share, cpu_period_ms: p.period_ms ?? 100 };
  return null;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** Applies one fault; fills `detail` with what rollback needs. */
export async function apply(mesh: Mesh, inj: Planned, p: Parameters, actor: ActionActor): Promise<void> {
  mesh.nodeOf(inj.node_id);
  const node = mesh.faults(inj.node_id)!;
  const control = controlOf(inj.kind, p);
  if (control) {
    inj.detail = { previous_control: node.control, control: { ...(node.control ?? {}), ...control } };
    mesh.setControl(inj.node_id, inj.detail.control as NodeControl);
  } else if (inj.kind === 'node_pause') {
    await mesh.pauseNode(inj.node_id, actor);
    inj.detail = { paused: true };
  } else {
    inj.detail = { thread_ids_before: node.liveThreadIds(), thread_starts_before: node.threadStarts, thread_exits_before: node.threadExits, crashes_requested: 0 };
  }
  inj.applied = true;
}

/** Removes one fault (idempotent); answers a note when it could not be removed as applied. */
export async function rollback(mesh: Mesh, inj: Planned, actor: ActionActor): Promise<string | null> {
  if (inj.rolledBack) return null;
  inj.rolledBack = true;
  if (!inj.applied) return 'never applied';
  const node = mesh.faults(inj.node_id);
  if (!node) return `node ${inj.node_id} no longer exists`;
  if (inj.kind === 'node_pause') {
    if (node.state !== 'paused') return `node ${inj.node_id} was ${node.state}, not paused, at rollback: left as it was`;
    await mesh.resumeNode(inj.node_id, actor);
    return null;
  }
  if (inj.kind === 'worker_crash') {
    inj.detail = { ...inj.detail, ...crashEffects(localState(mesh, inj.node_id), inj) };
    return null;
  }
  // Only the control this experiment set is removed; what was there before comes back.
  if (!same(node.control, inj.detail.control)) return `node ${inj.node_id}'s control had changed since the injection: left as it was`;
  mesh.setControl(inj.node_id, (inj.detail.previous_control as NodeControl | null) ?? null);
  return null;
}

/** Threads a worker_crash injection ended and the replacements Piscina started, measured on the node (its state, wherever it runs). */
export function crashEffects(node: FaultState | null, inj: Planned): Record<string, unknown> {
  if (!node) return {};
  const before = new Set(inj.detail.thread_ids_before as number[]);
  return {
    threads_exited: node.threadExits - (inj.detail.thread_exits_before as number),
    threads_replaced: node.threadStarts - (inj.detail.thread_starts_before as number),
    thread_ids_after: node.liveThreadIds,
    new_thread_ids: node.liveThreadIds.filter((id) => !before.has(id)),
  };
}
