import type { NodeAction } from '../../core/cluster/node-actions';
import { HttpError } from '../../core/errors';
import type { Mesh } from '../../core/mesh/mesh';
import type { ActionActor } from '../../core/mesh/types';

/**
 * Runs a node action here when this host runs the node, or on the host that does (in a
 * cluster), answering exactly what that host answered: the state changes once, there.
 */
export async function onOwner<T>(mesh: Mesh, nodeId: string, action: NodeAction, args: { actor?: ActionActor } & Record<string, unknown>, local: () => T | Promise<T>): Promise<T> {
  const owner = mesh.ownerOf(nodeId);
  if (!owner || !mesh.bus) return local();
  const actor = args.actor ? { ...args.actor, cause: `sent through host ${mesh.hostId}` } : undefined;
  const a = await mesh.bus.request(owner, nodeId, action, { ...args, actor });
  if (a.status < 300) return a.body as T;
  const { detail, code, ...extra } = (a.body ?? {}) as { detail?: unknown; code?: string } & Record<string, unknown>;
  throw new HttpError(a.status, detail ?? `host ${owner} answered ${a.status}`, {}, code, extra);
}
