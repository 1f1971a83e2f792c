// The overview (spec §2) and the statistics of the mesh, from live state.
import type { Mesh } from './mesh';
import { timing } from './node';
import type { MeshStats } from './types';

export function overviewOf(mesh: Mesh) {
  const nodes = [...mesh.nodeMap.values()];
  const byHealth: Record<string, number> = {};
  const byState: Record<string, number> = {};
  const remote = mesh.remoteNodes();
  for (const node of [...nodes.map((n) => n.node), ...remote]) {
    byHealth[node.health] = (byHealth[node.health] ?? 0) + 1;
    byState[node.state] = (byState[node.state] ?? 0) + 1;
  }
  const kernels = [...mesh.kernelMap.values()];
  const remoteOf = (id: string) => remote.filter((n) => n.kernel_id === id).length;
  return {
    timestamp: new Date().toISOString(),
    registry: {
      total_nodes: nodes.length + remote.length,
      by_domain: Object.fromEntries(kernels.map((k) => [k.id, k.nodes.length + remoteOf(k.id)])),
      by_health: byHealth,
      by_state: byState,
    },
    health: { global_state: mesh.globalHealth.health, reason: mesh.globalHealth.reason, kernel_count: kernels.length, kernels: Object.fromEntries(kernels.map((k) => [k.id, k.health])) },
    circuit_breaker: {
      kernel_states: Object.fromEntries(kernels.map((k) => [k.id, k.breakerState()])),
      isolated_kernels: kernels.filter((k) => k.isOpen).map((k) => k.id),
    },
  };
}

export function statsOf(mesh: Mesh): MeshStats {
  const kernels = [...mesh.kernelMap.values()].map((k) => {
    const nodes = k.nodes.map((n) => {
      const t = n.timings();
      return { node_id: n.id, host: mesh.hostId, state: n.state, tasks_run: n.tasksRun, tasks_failed: n.tasksFailed, in_flight: n.inFlight, queued: n.queued, utilization: n.pool ? Math.round(n.pool.utilization * 1000) / 1000 : 0, run_time_ms: t.run, wait_time_ms: t.wait };
    });
    const sum = (f: (x: (typeof nodes)[number]) => number) => nodes.reduce((a, x) => a + f(x), 0);
    return { kernel_id: k.id, tasks_run: sum((x) => x.tasks_run), tasks_failed: sum((x) => x.tasks_failed), in_flight: sum((x) => x.in_flight), queued: sum((x) => x.queued), run_time_ms: timing(k.runTime), wait_time_ms: timing(k.waitTime), nodes };
  });
  const total = (f: (x: (typeof kernels)[number]) => number) => kernels.reduce((a, x) => a + f(x), 0);
  return {
    timestamp: new Date().toISOString(),
    totals: { tasks_run: total((k) => k.tasks_run), tasks_failed: total((k) => k.tasks_failed), in_flight: total((k) => k.in_flight), queued: total((k) => k.queued) },
    kernels,
  };
}
