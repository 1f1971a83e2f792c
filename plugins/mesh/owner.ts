import type { NodeAction } from '../../core/cluster/node-actions';
import { bodyOrThrow } from '../../core/cluster/bus';
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
  return bodyOrThrow<T>(await mesh.bus.request(owner, nodeId, action, { ...args, actor }), owner);
}
