import type { Mesh } from '../mesh/mesh';
import type { ActionActor } from '../mesh/types';
import { answerOf, type ControlAnswer, type ControlRequest } from './bus';

/** Node actions another host may send to the host that runs the node (plugins/mesh routes them). */
export const NODE_ACTIONS = ['pause', 'resume', 'drain', 'drain_complete', 'drain_abort', 'drain_status', 'remove', 'threads'] as const;
export type NodeAction = (typeof NODE_ACTIONS)[number];

/** Runs a routed action on this host, as its own route would, and answers with that route's status and body. */
export async function runOwned(mesh: Mesh, req: ControlRequest): Promise<ControlAnswer> {
  const id = req.node_id;
  const actor = req.args.actor as ActionActor;
  const opts = (req.args.opts ?? {}) as { deadline_seconds?: number; force?: boolean };
  switch (req.action as NodeAction) {
    case 'pause': return answerOf(() => mesh.pauseNode(id, actor));
    case 'resume': return answerOf(() => mesh.resumeNode(id, actor));
    case 'drain': return answerOf(() => mesh.drainNode(id, opts, actor), 202);
    case 'drain_complete': return answerOf(() => mesh.completeDrain(id, opts, actor));
    case 'drain_abort': return answerOf(() => mesh.abortDrain(id, actor));
    case 'drain_status': return answerOf(() => mesh.drainStatus(id));
    case 'remove': return answerOf(async () => {
      await mesh.removeNode(id, actor);
      return null;
    }, 204);
    case 'threads': return answerOf(() => mesh.setThreads(id, Number(req.args.threads), actor));
    default: return { status: 400, body: { detail: `Unknown node action "${req.action}"`, code: 'UNKNOWN_ACTION' } };
  }
}
