import type { ComponentHealth } from '../health';
import type { Mesh } from '../mesh/mesh';
import type { Health } from '../mesh/types';

const RANK: Record<Health, number> = { healthy: 0, unknown: 1, degraded: 2, unhealthy: 3 };

/**
 * The `cluster` component of /health/ (on a host of a cluster): degraded while a host is lost
 * (its lease ran out and it has not come back or left cleanly), with each kernel's worst node
 * health over every host, so any host's /health/ tells the state of the whole cluster.
 */
export function clusterHealth(mesh: Mesh): ComponentHealth {
  const hosts = mesh.hosts();
  const lost = hosts.filter((h) => !h.live).map((h) => h.host_id);
  const nodes = mesh.nodes();
  const kernels: Record<string, Health> = {};
  for (const n of nodes) {
    if (n.state === 'lost' || n.state === 'drained') continue;
    const was = kernels[n.kernel_id];
    if (!was || RANK[n.health] > RANK[was]) kernels[n.kernel_id] = n.health;
  }
  return {
    status: lost.length ? 'degraded' : 'healthy',
    detail: {
      this_host: mesh.hostId,
      hosts: hosts.length,
      live_hosts: hosts.length - lost.length,
      lost_hosts: lost,
      nodes: nodes.length,
      kernels,
      reason: lost.length ? `host${lost.length > 1 ? 's' : ''} ${lost.join(', ')} stopped heartbeating` : 'every host heartbeats',
    },
  };
}
