// POST /chaos/validate_production: a short, small-blast-radius latency experiment per domain,
// one domain at a time, within a total time budget; the verdict comes with the experiments.
import crypto from 'node:crypto';
import { nowIso } from '../../../core/db';
import { clusterNodes } from './injections';
import type { Experiment } from './schemas';
import type { ChaosService, Definition } from './service';

export type Verdict = 'passed' | 'failed' | 'inconclusive';

export async function validate(chaos: ChaosService, domains: string[], latencyMs: number, caller: { id: string; tenantId: string }) {
  for (const d of domains) clusterNodes(chaos.mesh, d);
  await chaos.checkFree(domains);
  // The domains are held for the whole validation, so that nothing else starts on them meanwhile.
  const key = `validation ${crypto.randomUUID()}`;
  for (const d of domains) chaos.busy.set(d, key);
  const started = Date.now();
  const v = chaos.cfg.validation;
  const results: Array<{ domain: string; experiment_id: string | null; outcome: string; reason: string | null }> = [];
  const experiments: Experiment[] = [];
  try {
    for (const domain of domains) {
      const need = v.durationSeconds * 1000 + 2 * chaos.cfg.probes.count * 20;
      if (Date.now() - started + need > v.maxTotalSeconds * 1000) {
        results.push({ domain, experiment_id: null, outcome: 'skipped', reason: `would pass the ${v.maxTotalSeconds} s budget of the validation` });
        continue;
      }
      const def: Definition = {
        scenario_id: null,
        scenario_name: `production validation: ${latencyMs} ms latency on ${v.maxNodes} node(s) of ${domain}`,
        kind: 'validation',
        injection_type: 'latency',
        target_domains: [domain],
        parameters: { latency_ms: latencyMs, jitter_ms: 0, task_share: 1, node_share: 1, max_nodes: v.maxNodes },
        duration_seconds: v.durationSeconds,
        hypothesis: { description: 'The domain keeps answering within its latency budget while one node is slow', min_success_ratio: v.minSuccessRatio, max_latency_p99_ms: v.maxLatencyP99Ms },
      };
      try {
        const live = await chaos.begin(def, caller, true);
        await live.done;
        const exp = await chaos.get(caller.tenantId, live.id);
        experiments.push(exp);
        const outcome = exp.status === 'completed' ? (exp.deviated ? 'deviated' : 'passed') : exp.status;
        results.push({ domain, experiment_id: exp.experiment_id, outcome, reason: exp.reason });
      } catch (err) {
        results.push({ domain, experiment_id: null, outcome: 'skipped', reason: (err as Error).message });
      }
    }
  } finally {
    for (const d of domains) if (chaos.busy.get(d) === key) chaos.busy.delete(d);
  }
  const verdict: Verdict = results.some((r) => r.outcome === 'deviated') ? 'failed' : results.every((r) => r.outcome === 'passed') ? 'passed' : 'inconclusive';
  await chaos.actions.record({ source: 'manual', actor: caller.id, action: 'validate_production', target_type: 'chaos', target_id: 'validation', cause: null, result: 'succeeded', detail: { verdict, domains: results }, tenant_id: caller.tenantId });
  return { verdict, ready: verdict === 'passed', started_at: new Date(started).toISOString(), ended_at: nowIso(), duration_ms: Date.now() - started, domains: results, experiments };
}
