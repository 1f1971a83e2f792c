// What AKO measures per kernel and the proposals it derives (rules: README "AKO").
import type { Config } from '../../core/config';
import { outcomeCounts, outcomeCountsByNode, outcomePercentiles } from '../../core/mesh/outcomes';
import type { Services } from '../../core/services';

export type AkoAction = 'add_node' | 'remove_node' | 'drain_node' | 'set_threads';

export interface Proposal {
  kernel_id: string;
  action: AkoAction;
  target_type: 'kernel' | 'node';
  target_id: string;
  params: Record<string, unknown>;
  reason: string;
  evidence: Record<string, unknown>;
  thresholds: Record<string, unknown>;
}

interface NodeFigures {
  node_id: string;
  state: string;
  health: string;
  threads: number;
  utilisation: number;
  tasks: number;
  failed: number;
  error_rate: number | null;
}

export interface KernelFigures {
  kernel_id: string;
  tasks: number;
  failed: number;
  queue_wait_p90_ms: number | null;
  mean_utilisation: number | null;
  nodes: NodeFigures[];
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** Queue wait and error rate from the task outcomes of the window; utilisation, state and health from the live mesh. */
export async function measure(services: Pick<Services, 'db' | 'mesh' | 'actions' | 'config'>, cfg: Config['ako']): Promise<KernelFigures[]> {
  // Outcomes are written in batches: write what is buffered so that the latest tasks count.
  await services.mesh.outcomesWriter.flush();
  const since = new Date(Date.now() - cfg.windowSeconds * 1000).toISOString();
  // One snapshot of the live mesh (nodes may come and go while the database answers).
  const stats = services.mesh.stats();
  const views = new Map(services.mesh.nodes().map((v) => [v.id, v]));
  const out: KernelFigures[] = [];
  for (const k of stats.kernels) {
    const filter = { kernelId: k.kernel_id, since };
    const counts = await outcomeCounts(services.db, filter);
    const byNode = await outcomeCountsByNode(services.db, filter);
    const wait = await outcomePercentiles(services.db, filter, 'wait_ms', [90], counts.tasks);
    const nodes: NodeFigures[] = k.nodes.map((n) => {
      const view = views.get(n.node_id)!;
      const own = byNode.get(n.node_id) ?? { tasks: 0, failed: 0 };
      return { node_id: n.node_id, state: n.state, health: view.health, threads: view.threads, utilisation: n.utilization, tasks: own.tasks, failed: own.failed, error_rate: own.tasks ? r3(own.failed / own.tasks) : null };
    });
    const active = nodes.filter((n) => n.state === 'active');
    out.push({
      kernel_id: k.kernel_id,
      tasks: counts.tasks,
      failed: counts.failed,
      queue_wait_p90_ms: wait ? r3(wait[0]!) : null,
      mean_utilisation: active.length ? r3(active.reduce((a, n) => a + n.utilisation, 0) / active.length) : null,
      nodes,
    });
  }
  return out;
}

/** The proposals for one kernel; a node gets at most one. */
export function propose(k: KernelFigures, cfg: Config['ako']): Proposal[] {
  const out: Proposal[] = [];
  const base = { kernel_id: k.kernel_id };
  const kernelEvidence = { tasks: k.tasks, failed: k.failed, queue_wait_p90_ms: k.queue_wait_p90_ms, mean_utilisation: k.mean_utilisation, window_seconds: cfg.windowSeconds };

  // 1. Drain unhealthy nodes while another active node remains to take the work.
  const failing = k.nodes.filter((n) => (n.state === 'active' || n.state === 'paused') && (n.health === 'unhealthy' || (n.tasks >= cfg.minTasks && n.error_rate !== null && n.error_rate >= cfg.errorRateDrain)));
  const healthyActive = k.nodes.filter((n) => n.state === 'active' && !failing.includes(n));
  if (healthyActive.length > 0) {
    for (const n of failing) {
      const why = n.health === 'unhealthy' ? 'the node is unhealthy' : `error rate ${n.error_rate} over ${n.tasks} tasks`;
      out.push({ ...base, action: 'drain_node', target_type: 'node', target_id: n.node_id, params: {}, reason: `${why}; ${healthyActive.length} other active node(s) take its work`, evidence: { node: n, ...kernelEvidence }, thresholds: { errorRateDrain: cfg.errorRateDrain, minTasks: cfg.minTasks } });
    }
  }

  // 2. Capacity: queued tasks wait too long, or the active nodes are busy.
  const slowQueue = k.tasks >= cfg.minTasks && k.queue_wait_p90_ms !== null && k.queue_wait_p90_ms >= cfg.queueWaitP90Ms;
  const busy = k.mean_utilisation !== null && k.mean_utilisation >= cfg.utilisationHigh;
  const thresholds = { queueWaitP90Ms: cfg.queueWaitP90Ms, utilisationHigh: cfg.utilisationHigh, minTasks: cfg.minTasks, maxNodesPerKernel: cfg.maxNodesPerKernel, maxThreadsPerNode: cfg.maxThreadsPerNode };
  if (slowQueue || busy) {
    const why = [slowQueue ? `queue wait p90 ${k.queue_wait_p90_ms} ms ≥ ${cfg.queueWaitP90Ms} ms` : '', busy ? `mean utilisation ${k.mean_utilisation} ≥ ${cfg.utilisationHigh}` : ''].filter(Boolean).join('; ');
    const live = k.nodes.filter((n) => n.state !== 'drained');
    if (live.length < cfg.maxNodesPerKernel) {
      const threads = live[0]?.threads ?? 1;
      out.push({ ...base, action: 'add_node', target_type: 'kernel', target_id: k.kernel_id, params: { threads }, reason: why, evidence: kernelEvidence, thresholds });
    } else {
      const grow = healthyActive.filter((n) => n.threads < cfg.maxThreadsPerNode).sort((a, b) => b.utilisation - a.utilisation)[0];
      if (grow) out.push({ ...base, action: 'set_threads', target_type: 'node', target_id: grow.node_id, params: { threads: grow.threads + 1 }, reason: `${why}; the kernel has ${live.length} nodes (the most allowed)`, evidence: { node: grow, ...kernelEvidence }, thresholds });
    }
    return out;
  }

  // 3. Surplus: every active node idle and no queue wait.
  const idle = healthyActive.length > 0 && healthyActive.every((n) => n.utilisation <= cfg.utilisationLow) && !(k.queue_wait_p90_ms !== null && k.queue_wait_p90_ms >= cfg.queueWaitP90Ms);
  const low = { utilisationLow: cfg.utilisationLow, queueWaitP90Ms: cfg.queueWaitP90Ms };
  if (idle && healthyActive.length >= 2 && failing.length === 0) {
    const last = [...healthyActive].sort((a, b) => Number(b.node_id.split('-').pop()) - Number(a.node_id.split('-').pop()))[0]!;
    out.push({ ...base, action: 'remove_node', target_type: 'node', target_id: last.node_id, params: {}, reason: `all ${healthyActive.length} active nodes at utilisation ≤ ${cfg.utilisationLow}`, evidence: { node: last, ...kernelEvidence }, thresholds: low });
  } else if (idle && healthyActive.length === 1 && healthyActive[0]!.threads > 1) {
    const n = healthyActive[0]!;
    out.push({ ...base, action: 'set_threads', target_type: 'node', target_id: n.node_id, params: { threads: n.threads - 1 }, reason: `the only active node is at utilisation ${n.utilisation} ≤ ${cfg.utilisationLow} with ${n.threads} threads`, evidence: { node: n, ...kernelEvidence }, thresholds: low });
  }
  return out;
}
