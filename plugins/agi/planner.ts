// Orient and decide: which objectives the KPIs meet, and what to do about the ones they do not.
// Each decision carries its evidence (observations with the metric that measured them), the
// rules that concluded it and a prediction, so that it can be written as an insight chain.
import type { Db } from '../../core/db';
import type { Mesh } from '../../core/mesh/mesh';
import { outcomeCountsByNode } from '../../core/mesh/outcomes';
import type { Inference, KpiSnapshot, NewChain, Observation } from '../../core/contracts/insights';
import type { Objective } from '../../core/contracts/planning';

export interface Decision {
  objective: string;
  /** A governed action kind, or null when the platform has no action for it (a recommendation only). */
  kind: string | null;
  target: string;
  params: Record<string, unknown>;
  reason: string;
  chain: Omit<NewChain, 'tenant_id' | 'agent_id'>;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

export function objectives(s: KpiSnapshot, workflowFailureTarget: number): Objective[] {
  const out: Objective[] = [];
  const status = (v: number | null, ok: (v: number) => boolean): Objective['status'] => (v === null ? 'no_data' : ok(v) ? 'met' : 'unmet');
  for (const k of s.kernels) {
    out.push({ id: `availability:${k.kernel}`, kpi: 'kernel_slo_burn_rate', scope: k.kernel, target: '<= 1 (error rate within the SLO budget)', value: k.slo_burn_rate, status: status(k.slo_burn_rate, (v) => v <= 1) });
    out.push({ id: `latency:${k.kernel}`, kpi: 'kernel_latency_p95_ms', scope: k.kernel, target: `<= ${k.slo.latency_p99_ms} ms (the SLO's p99 target)`, value: k.latency_p95_ms, status: status(k.latency_p95_ms, (v) => v <= k.slo.latency_p99_ms) });
  }
  out.push({ id: 'workflow_failures', kpi: 'workflow_failure_rate', scope: 'tenant', target: `<= ${workflowFailureTarget}`, value: s.tenant.workflow_failure_rate, status: status(s.tenant.workflow_failure_rate, (v) => v <= workflowFailureTarget) });
  out.push({ id: 'open_incidents', kpi: 'open_incidents', scope: 'tenant', target: '= 0', value: s.tenant.open_incidents, status: status(s.tenant.open_incidents, (v) => v === 0) });
  return out;
}

export async function decide(db: Db, mesh: Mesh, s: KpiSnapshot, objs: Objective[], workflowFailureTarget: number): Promise<Decision[]> {
  const at = s.window.until;
  const w = { window_seconds: s.window.seconds };
  const out: Decision[] = [];
  for (const o of objs.filter((x) => x.status === 'unmet')) {
    const k = s.kernels.find((x) => x.kernel === o.scope);
    if (o.id.startsWith('latency:') && k) {
      const obs: Observation[] = [
        { id: 'o1', metric: 'kernel_latency_p95_ms', params: { kernel: k.kernel, ...w }, value: k.latency_p95_ms, at },
        { id: 'o2', metric: 'kernel_active_nodes', params: { kernel: k.kernel }, value: k.active_nodes, at },
      ];
      const inf: Inference[] = [
        { id: 'i1', text: `p95 latency ${k.latency_p95_ms} ms is above the ${k.slo.latency_p99_ms} ms target`, from: ['o1'], rule: { observation: 'o1', op: '>', threshold: k.slo.latency_p99_ms } },
        { id: 'i2', text: `${k.active_nodes} active node(s) share the load; one more adds capacity`, from: ['o2'], rule: { observation: 'o2', op: '>=', threshold: 1 } },
      ];
      const predicted = round(k.latency_p95_ms! * (k.active_nodes / (k.active_nodes + 1)));
      out.push({
        objective: o.id, kind: 'add_node', target: k.kernel, params: {}, reason: `latency objective unmet on ${k.kernel}`,
        chain: { topic: 'capacity', summary: `Add a node to ${k.kernel}: p95 latency above target`, observations: obs, inferences: inf, recommendation: { action: 'add_node', target: k.kernel, params: {}, text: `add a node to ${k.kernel}`, prediction: { metric: 'kernel_latency_p95_ms', params: { kernel: k.kernel, ...w }, value: predicted } } },
      });
    } else if (o.id.startsWith('availability:') && k) {
      // A node failing far more than its kernel's others is drained (when others stay active).
      const byNode = await outcomeCountsByNode(db, { kernelId: k.kernel, since: s.window.since });
      const rates = [...byNode.entries()].filter(([, c]) => c.tasks > 0).map(([node, c]) => ({ node, rate: c.failed / c.tasks, ...c }));
      const worst = rates.sort((a, b) => b.rate - a.rate)[0];
      const others = rates.filter((r) => r !== worst);
      const otherTasks = others.reduce((a, r) => a + r.tasks, 0);
      const otherRate = otherTasks ? others.reduce((a, r) => a + r.failed, 0) / otherTasks : null;
      const obs: Observation[] = [{ id: 'o1', metric: 'kernel_slo_burn_rate', params: { kernel: k.kernel, ...w }, value: k.slo_burn_rate, at }];
      const inf: Inference[] = [{ id: 'i1', text: `error budget burning at ${k.slo_burn_rate}x on ${k.kernel}`, from: ['o1'], rule: { observation: 'o1', op: '>', threshold: 1 } }];
      const live = worst && mesh.nodeMap.get(worst.node)?.node.state === 'active';
      if (worst && live && otherRate !== null && k.active_nodes > 1 && worst.rate >= 2 * otherRate) {
        obs.push({ id: 'o2', metric: 'kernel_error_rate', params: { kernel: k.kernel, ...w }, value: k.error_rate, at, detail: { node: worst.node, node_error_rate: round(worst.rate), other_nodes_error_rate: round(otherRate) } });
        inf.push({ id: 'i2', text: `node ${worst.node} fails ${round(worst.rate)} of its tasks, the others ${round(otherRate)}`, from: ['o2'], rule: null });
        out.push({
          objective: o.id, kind: 'drain_node', target: worst.node, params: {}, reason: `availability objective unmet on ${k.kernel}; node ${worst.node} fails most`,
          chain: { topic: 'availability', summary: `Drain ${worst.node}: it carries the failures of ${k.kernel}`, observations: obs, inferences: inf, recommendation: { action: 'drain_node', target: worst.node, params: {}, text: `drain node ${worst.node}`, prediction: { metric: 'kernel_error_rate', params: { kernel: k.kernel, ...w }, value: round(otherRate) } } },
        });
      } else {
        out.push({ objective: o.id, kind: null, target: k.kernel, params: {}, reason: 'failures are spread over the nodes: no mesh action removes them', chain: { topic: 'availability', summary: `Investigate failures of ${k.kernel}`, observations: obs, inferences: inf, recommendation: { action: 'investigate', target: k.kernel, params: {}, text: `failures of ${k.kernel} are spread over its nodes; look at the failing tasks`, prediction: null } } });
      }
    } else if (o.id === 'workflow_failures') {
      out.push({ objective: o.id, kind: null, target: 'workflows', params: {}, reason: 'workflow failure rate above target', chain: { topic: 'workflows', summary: 'Workflow failure rate above target', observations: [{ id: 'o1', metric: 'workflow_failure_rate', params: w, value: o.value, at }], inferences: [{ id: 'i1', text: `workflow failure rate ${o.value} above ${workflowFailureTarget}`, from: ['o1'], rule: { observation: 'o1', op: '>', threshold: workflowFailureTarget } }], recommendation: { action: 'evolve_workflows', target: null, params: {}, text: 'evolve the failing workflows (POST /autonomous/workflows/{id}/evolve) and canary the variants', prediction: null } } });
    } else if (o.id === 'open_incidents') {
      out.push({ objective: o.id, kind: null, target: 'incidents', params: {}, reason: 'open incidents', chain: { topic: 'incidents', summary: `${o.value} open incident(s)`, observations: [{ id: 'o1', metric: 'open_incidents', params: {}, value: o.value, at }], inferences: [{ id: 'i1', text: 'incidents are open', from: ['o1'], rule: { observation: 'o1', op: '>', threshold: 0 } }], recommendation: { action: 'resolve_incidents', target: null, params: {}, text: 'mitigate and resolve the open incidents', prediction: { metric: 'open_incidents', params: {}, value: 0 } } } });
    }
  }
  return out;
}
