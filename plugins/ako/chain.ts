// A proposal as an insight chain (core/contracts/insights.ts): the figures it rests on as
// observations, the thresholds it crossed as inferences, the change as the recommendation.
// Kernel figures that the KPI service also measures are named by its metrics, so that
// /agi/insight_chains/{id}/replay can measure them again; AKO's own figures (queue wait p90,
// utilisation, a node's error rate and health) are kept as measured then (`ako.*`).
import type { Config } from '../../core/config';
import type { Inference, NewChain, Observation, Op } from '../../core/contracts/insights';
import type { KernelFigures, Proposal } from './analysis';

export const AKO_AGENT = 'ako';

export function chainOf(p: Proposal, k: KernelFigures, cfg: Config['ako'], tenantId: string, at: string): NewChain {
  const kernel = { kernel: k.kernel_id, window_seconds: cfg.windowSeconds };
  const active = k.nodes.filter((n) => n.state === 'active').length;
  const node = (p.evidence.node ?? null) as KernelFigures['nodes'][number] | null;
  const obs: Observation[] = [
    { id: 'o1', metric: 'kernel_tasks', params: kernel, value: k.tasks, at },
    { id: 'o2', metric: 'kernel_error_rate', params: kernel, value: k.tasks ? k.failed / k.tasks : null, at },
    { id: 'o3', metric: 'kernel_active_nodes', params: { kernel: k.kernel_id }, value: active, at },
    { id: 'o4', metric: 'ako.queue_wait_p90_ms', params: kernel, value: k.queue_wait_p90_ms, at },
    { id: 'o5', metric: 'ako.mean_utilisation', params: { kernel: k.kernel_id }, value: k.mean_utilisation, at },
  ];
  if (node) {
    obs.push({ id: 'o6', metric: 'ako.node_error_rate', params: { node: node.node_id, window_seconds: cfg.windowSeconds }, value: node.error_rate, detail: { tasks: node.tasks, failed: node.failed }, at });
    obs.push({ id: 'o7', metric: 'ako.node_unhealthy', params: { node: node.node_id }, value: node.health === 'unhealthy' ? 1 : 0, detail: { health: node.health }, at });
    obs.push({ id: 'o8', metric: 'ako.node_utilisation', params: { node: node.node_id }, value: node.utilisation, at });
  }
  const inf: Inference[] = [];
  const rule = (text: string, observation: string, op: Op, threshold: number) => inf.push({ id: `i${inf.length + 1}`, text, from: [observation], rule: { observation, op, threshold } });
  const value = (id: string) => obs.find((o) => o.id === id)?.value ?? null;
  switch (p.action) {
    case 'drain_node':
      if (node?.health === 'unhealthy') rule(`node ${node.node_id} is unhealthy`, 'o7', '>=', 1);
      else rule(`node ${node?.node_id} fails at least ${cfg.errorRateDrain} of its tasks`, 'o6', '>=', cfg.errorRateDrain);
      rule('another active node remains to take its work', 'o3', '>=', 2);
      break;
    case 'add_node':
    case 'set_threads':
      if (Number(p.params.threads) > (node?.threads ?? 0) || p.action === 'add_node') {
        if ((value('o4') ?? -1) >= cfg.queueWaitP90Ms) rule(`queued tasks wait ${cfg.queueWaitP90Ms} ms or more (p90)`, 'o4', '>=', cfg.queueWaitP90Ms);
        if ((value('o5') ?? -1) >= cfg.utilisationHigh) rule(`the active nodes are busy (mean utilisation ≥ ${cfg.utilisationHigh})`, 'o5', '>=', cfg.utilisationHigh);
      } else rule(`the only active node is idle (utilisation ≤ ${cfg.utilisationLow})`, 'o8', '<=', cfg.utilisationLow);
      break;
    case 'remove_node':
      rule(`every active node is idle (mean utilisation ≤ ${cfg.utilisationLow})`, 'o5', '<=', cfg.utilisationLow);
      rule('at least two active nodes, so one can go', 'o3', '>=', 2);
      break;
  }
  // What the change should do to a figure the KPI service measures, checked by settle().
  const nodes = p.action === 'add_node' ? active + 1 : p.action === 'drain_node' || p.action === 'remove_node' ? active - 1 : null;
  return {
    tenant_id: tenantId,
    agent_id: AKO_AGENT,
    topic: `ako:${p.action}`,
    summary: `${p.action} ${p.target_id}: ${p.reason}`.slice(0, 500),
    observations: obs,
    inferences: inf,
    recommendation: {
      action: p.action,
      target: p.target_id,
      params: p.params,
      text: p.reason,
      prediction: nodes === null ? null : { metric: 'kernel_active_nodes', params: { kernel: k.kernel_id }, value: nodes },
    },
  };
}
