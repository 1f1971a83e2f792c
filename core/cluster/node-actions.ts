import { HttpError } from '../errors';
import type { Mesh } from '../mesh/mesh';
import type { ActionActor } from '../mesh/types';
import type { ControlAnswer, ControlRequest } from './bus';

/** Node actions another host may send to the host that runs the node (plugins/mesh routes them). */
export const NODE_ACTIONS = ['pause', 'resume', 'drain', 'drain_complete', 'drain_abort', 'drain_status', 'remove', 'threads'] as const;
export type NodeAction = (typeof NODE_ACTIONS)[number];

/** Runs a routed action on this host, as its own route would, and answers with that route's status and body. */
export async function runOwned(mesh: Mesh, req: ControlRequest): Promise<ControlAnswer> {
  const id = req.node_id;
  const actor = req.args.actor as ActionActor;
  const opts = (req.args.opts ?? {}) as { deadline_seconds?: number; force?: boolean };
  try {
    switch (req.action as NodeAction) {
      case 'pause': return { status: 200, body: await mesh.pauseNode(id, actor) };
      case 'resume': return { status: 200, body: await mesh.resumeNode(id, actor) };
      case 'drain': return { status: 202, body: await mesh.drainNode(id, opts, actor) };
      case 'drain_complete': return { status: 200, body: await mesh.completeDrain(id, opts, actor) };
      case 'drain_abort': return { status: 200, body: await mesh.abortDrain(id, actor) };
      case 'drain_status': return { status: 200, body: mesh.drainStatus(id) };
      case 'remove':
        await mesh.removeNode(id, actor);
        return { status: 204, body: null };
      case 'threads': return { status: 200, body: await mesh.setThreads(id, Number(req.args.threads), actor) };
      default: return { status: 400, body: { detail: `Unknown node action "${req.action}"`, code: 'UNKNOWN_ACTION' } };
    }
  } catch (err) {
    if (err instanceof HttpError) return { status: err.status, body: err.body() };
    throw err;
  }
}
