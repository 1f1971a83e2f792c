import type { Deps } from './deps';

type S = Pick<Deps, 'db' | 'mesh' | 'config' | 'telemetryStore'>;

/**
 * How well each kernel is observed, for the caller's tenant: traces (kernel telemetry
 * ingested in the last day), metrics (task outcomes recorded in the last day), an explicit
 * SLO (its own target in config, not only the default), alerts (a subscription of the tenant
 * to health, breaker or incident events) and heartbeats (every node's health measured).
 * Each missing dimension names the change that would add it.
 */
export async function score(s: S, tenantId: string) {
  const until = new Date().toISOString();
  const since = new Date(Date.parse(until) - 86_400_000).toISOString();
  const hasAlerts = (await s.db.schema.hasTable('alert_subscriptions'))
    ? (await s.db('alert_subscriptions').where({ tenant_id: tenantId }).select('event_types')).some((r) => {
        const types = JSON.parse(r.event_types) as string[];
        return types.includes('*') || types.some((t) => ['health_update', 'breaker_state', 'incident'].includes(t));
      })
    : false;
  const kernels = [];
  for (const k of s.mesh.kernels()) {
    const traces = s.telemetryStore ? await s.telemetryStore.count({ tenantId, since, kernel: k.id }) : 0;
    const [{ tasks }] = await s.db('task_outcomes').where({ kernel_id: k.id }).andWhere('at', '>=', since).count({ tasks: '*' });
    const dims = [
      { id: 'traces', present: Number(traces) > 0, evidence: { kernel_events_24h: Number(traces) }, change: `ingest kernel telemetry with kernel="${k.id}" (POST /observability/v1/ingest/kernel)` },
      { id: 'metrics', present: Number(tasks) > 0, evidence: { task_outcomes_24h: Number(tasks) }, change: `run tasks on ${k.id}: its outcomes feed /metrics/ and the SLO reports` },
      { id: 'slo', present: k.id in s.config.slo.domains, evidence: { explicit_target: k.id in s.config.slo.domains }, change: `set slo.domains.${k.id} (availability, latencyP99Ms) in the configuration` },
      { id: 'alerts', present: hasAlerts, evidence: { tenant_alert_subscription: hasAlerts }, change: 'subscribe a webhook to health_update, breaker_state or incident events (POST /alerts/subscriptions)' },
      { id: 'heartbeats', present: k.nodes.length > 0 && k.nodes.every((n) => n.health !== 'unknown'), evidence: { nodes: k.nodes.map((n) => ({ id: n.id, health: n.health })) }, change: `start a node of ${k.id} (its heartbeats measure health)` },
    ];
    const present = dims.filter((d) => d.present).length;
    kernels.push({ kernel_id: k.id, score: Math.round((present / dims.length) * 100), dimensions: dims.map(({ change: _change, ...d }) => d), changes: dims.filter((d) => !d.present).map((d) => ({ dimension: d.id, change: d.change, score_after: Math.round(((present + 1) / dims.length) * 100) })) });
  }
  return {
    overall: kernels.length ? Math.round(kernels.reduce((a, k) => a + k.score, 0) / kernels.length) : 0,
    kernels,
    method: 'per kernel, the share of five observed dimensions present (each 20 points); overall is the mean over kernels',
    window: { since, until },
    inputs: ['telemetry_events (kernel, tenant)', 'task_outcomes', 'config slo.domains', 'alert_subscriptions', 'mesh node health'],
  };
}
