// Kernel-wide actions and node creation from any host of a cluster (docs/scale-out.md). A
// kernel's nodes run on several hosts: a kernel action goes to every live host that runs the
// kernel, each acts on its own nodes and records its part, and the answers are merged.
import { HttpError, NotFound } from '../errors';
import type { Mesh } from '../mesh/mesh';
import type { ActionActor, KernelView, NodeView } from '../mesh/types';
import { answerOf as answer, bodyOrThrow, type ControlAnswer, type ControlRequest } from './bus';

export type KernelAction = 'pause' | 'resume' | 'drain' | 'isolate' | 'restore';
type Opts = { deadline_seconds?: number; force?: boolean };
type Result = { kernel: KernelView; changed: string[]; skipped: Array<{ node_id: string; reason: string }> };

function here(mesh: Mesh, action: KernelAction, id: string, opts: Opts, actor: ActionActor): Promise<Result | KernelView> {
  switch (action) {
    case 'pause': return mesh.pauseKernel(id, actor);
    case 'resume': return mesh.resumeKernel(id, actor);
    case 'drain': return mesh.drainKernel(id, opts, actor);
    case 'isolate': return mesh.isolateKernel(id, actor);
    case 'restore': return mesh.restoreKernel(id, actor);
  }
}


/** The bus handlers of this host: kernel actions on its nodes, a node added here. */
export function kernelHandlers(mesh: Mesh): Record<string, (req: ControlRequest) => Promise<ControlAnswer>> {
  return {
    'kernel.action': (req) => answer(() => here(mesh, req.args.action as KernelAction, req.node_id, (req.args.opts ?? {}) as Opts, req.args.actor as ActionActor)),
    'node.add': (req) => answer(() => mesh.addNode(req.node_id, req.args.actor as ActionActor, req.args.threads as number | undefined)),
  };
}

/** The kernel's view with each node as the host that runs it just answered. */
function withFresh(view: KernelView, fresh: NodeView[]): KernelView {
  const byId = new Map(fresh.map((n) => [n.id, n]));
  const nodes = view.nodes.map((n) => byId.get(n.id) ?? n);
  const byState: Record<string, number> = {};
  for (const n of nodes) byState[n.state] = (byState[n.state] ?? 0) + 1;
  return { ...view, nodes, nodes_by_state: byState };
}

/**
 * A kernel action on every live host that runs the kernel (this one alone on a single host).
 * Succeeds when one host changed something; otherwise answers the hosts' refusals together
 * (409), or 404 when no host runs the kernel.
 */
export function kernelEverywhere(mesh: Mesh, action: 'pause' | 'resume' | 'drain', id: string, opts: Opts, actor: ActionActor): Promise<Result>;
export function kernelEverywhere(mesh: Mesh, action: 'isolate' | 'restore', id: string, opts: Opts, actor: ActionActor): Promise<KernelView>;
export async function kernelEverywhere(mesh: Mesh, action: KernelAction, id: string, opts: Opts, actor: ActionActor): Promise<Result | KernelView> {
  const bus = mesh.bus;
  if (!bus) return here(mesh, action, id, opts, actor);
  const hosts = [...new Set(mesh.remoteNodes().filter((n) => n.kernel_id === id && n.state !== 'lost' && n.host).map((n) => n.host!))].sort();
  const runsHere = mesh.kernelIds().includes(id);
  if (!runsHere && hosts.length === 0) throw new NotFound(`Unknown kernel "${id}"; no host of the cluster runs it`);
  const sent = { ...actor, cause: `sent through host ${mesh.hostId}` };
  const parts = await Promise.all([
    ...(runsHere ? [answer(() => here(mesh, action, id, opts, actor)).then((a) => ({ host: mesh.hostId!, a }))] : []),
    ...hosts.map(async (host) => ({ host, a: await bus.request(host, id, 'kernel.action', { action, opts, actor: sent }, { what: `nodes of kernel ${id}` }) })),
  ]);
  const ok = parts.filter((p) => p.a.status < 300);
  if (ok.length === 0) {
    const worst = parts.find((p) => p.a.status !== 409) ?? parts[0];
    if (parts.length === 1 || worst.a.status !== 409) return bodyOrThrow(worst.a, worst.host);
    const details = parts.map((p) => `host ${p.host}: ${(p.a.body as { detail?: string }).detail}`).join('; ');
    throw new HttpError(409, details, {}, 'CONFLICT');
  }
  const bodies = ok.map((p) => p.a.body as Result | KernelView);
  const viewOf = (b: Result | KernelView) => ('kernel' in b ? b.kernel : b);
  // Each host's own nodes as it just answered (its copies of the others' are a heartbeat old).
  const fresh = ok.flatMap((p, i) => viewOf(bodies[i]).nodes.filter((n) => n.host === p.host));
  const base = runsHere ? mesh.kernel(id) : viewOf(bodies[0]);
  const view = withFresh(base, fresh);
  if (action === 'isolate' || action === 'restore') return view;
  const results = bodies as Result[];
  return { kernel: view, changed: results.flatMap((r) => r.changed), skipped: results.flatMap((r) => r.skipped) };
}

/** Adds a node on `host` (another host of the cluster, or this one when null or its own id). */
export async function addNodeOn(mesh: Mesh, host: string | null | undefined, kernelId: string, actor: ActionActor, threads?: number): Promise<NodeView> {
  if (!host || host === mesh.hostId) return mesh.addNode(kernelId, actor, threads);
  const known = mesh.hosts().find((h) => h.host_id === host);
  if (!known || !mesh.bus) throw new NotFound(`Unknown host "${host}"; hosts: ${mesh.hosts().map((h) => h.host_id ?? '(this single host)').join(', ')}`);
  if (!known.live) throw new HttpError(409, `Host ${host} stopped heartbeating (last at ${known.heartbeat_at}); no node can be added there`, {}, 'HOST_LOST');
  return bodyOrThrow<NodeView>(await mesh.bus.request(host, kernelId, 'node.add', { threads, actor: { ...actor, cause: `sent through host ${mesh.hostId}` } }, { what: `kernel ${kernelId}` }), host);
}
