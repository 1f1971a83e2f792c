// What the /agi/insight_chains views compute from a stored chain: its graph, a replay
// (evidence measured again now, rules evaluated again) and an analysis of which evidence
// carried the conclusion and how the outcome compared with the prediction.
import { METRICS, type InsightChain, type KpiService, type Metric, type Op } from '../../core/contracts/insights';

export function holds(value: number | null, op: Op, threshold: number): boolean | null {
  if (value === null) return null;
  switch (op) {
    case '>': return value > threshold;
    case '>=': return value >= threshold;
    case '<': return value < threshold;
    case '<=': return value <= threshold;
  }
}

/** A chain concludes when every rule it tests holds (a chain without rules concludes). */
function concludes(chain: InsightChain, values: Map<string, number | null>): boolean {
  return chain.inferences.every((i) => !i.rule || holds(values.get(i.rule.observation) ?? null, i.rule.op, i.rule.threshold) === true);
}

export function graphOf(chain: InsightChain) {
  const nodes: Array<{ id: string; type: string; label: string; data: unknown }> = [];
  const edges: Array<{ source: string; target: string; relation: string }> = [];
  for (const o of chain.observations) nodes.push({ id: o.id, type: 'observation', label: `${o.metric} = ${o.value ?? 'no data'}`, data: o });
  for (const i of chain.inferences) {
    nodes.push({ id: i.id, type: 'inference', label: i.text, data: i });
    for (const f of i.from) edges.push({ source: f, target: i.id, relation: 'supports' });
  }
  if (chain.recommendation) {
    nodes.push({ id: 'recommendation', type: 'recommendation', label: chain.recommendation.text, data: chain.recommendation });
    for (const i of chain.inferences) edges.push({ source: i.id, target: 'recommendation', relation: 'leads_to' });
  }
  nodes.push({ id: 'decision', type: 'decision', label: chain.decision.state, data: chain.decision });
  edges.push({ source: chain.recommendation ? 'recommendation' : chain.inferences.at(-1)?.id ?? chain.observations.at(-1)?.id ?? 'decision', target: 'decision', relation: 'decided' });
  if (chain.outcome) {
    nodes.push({ id: 'outcome', type: 'outcome', label: `${chain.outcome.metric} = ${chain.outcome.value ?? 'no data'}`, data: chain.outcome });
    edges.push({ source: 'decision', target: 'outcome', relation: 'resulted_in' });
  }
  return { chain_id: chain.id, directed: true, nodes, edges: edges.filter((e) => e.source !== e.target) };
}

export async function replay(chain: InsightChain, kpis: KpiService) {
  const before = new Map(chain.observations.map((o) => [o.id, o.value]));
  const now = new Map<string, number | null>();
  const observations = [];
  for (const o of chain.observations) {
    const replayable = (METRICS as readonly string[]).includes(o.metric);
    let value: number | null = null;
    let error: string | null = null;
    if (replayable) {
      try {
        value = (await kpis.measure(chain.tenant_id, o.metric as Metric, o.params)).value;
      } catch (err) {
        // A kernel that no longer exists, say: the evidence cannot be measured again.
        error = (err as Error).message;
      }
    }
    now.set(o.id, replayable && !error ? value : o.value);
    observations.push({ id: o.id, metric: o.metric, params: o.params, then: o.value, now: replayable && !error ? value : null, replayable: replayable && !error, error });
  }
  const inferences = chain.inferences.map((i) => ({
    id: i.id,
    text: i.text,
    rule: i.rule ?? null,
    held_then: i.rule ? holds(before.get(i.rule.observation) ?? null, i.rule.op, i.rule.threshold) : null,
    holds_now: i.rule ? holds(now.get(i.rule.observation) ?? null, i.rule.op, i.rule.threshold) : null,
  }));
  const then = concludes(chain, before);
  const current = concludes(chain, now);
  return {
    chain_id: chain.id,
    method: 'each observation with a platform metric is measured again now with its parameters (same window length, ending now); every inference rule is evaluated again; the chain concludes when all rules hold',
    replayed_at: new Date().toISOString(),
    observations,
    inferences,
    concluded_then: then,
    concludes_now: current,
    same_conclusion: then === current,
    replayable: observations.filter((o) => o.replayable).length,
    not_replayable: observations.filter((o) => !o.replayable).map((o) => o.id),
  };
}

export function analyze(chain: InsightChain) {
  const byId = new Map(chain.observations.map((o) => [o.id, o]));
  const ruled = chain.inferences.filter((i) => i.rule);
  const evidence = chain.observations.map((o) => {
    const rules = ruled.filter((i) => i.rule!.observation === o.id);
    const margins = rules.map((i) => {
      const t = i.rule!.threshold;
      return o.value === null ? null : Math.abs(o.value - t) / Math.max(Math.abs(t), 1e-9);
    });
    const known = margins.filter((m): m is number => m !== null);
    return { observation: o.id, metric: o.metric, value: o.value, rules: rules.map((i) => ({ inference: i.id, ...i.rule!, holds: holds(o.value, i.rule!.op, i.rule!.threshold) })), margin: known.length ? Math.min(...known) : null, role: 'context' as 'context' | 'supporting' | 'decisive' };
  });
  const ruledEvidence = evidence.filter((e) => e.rules.length);
  const smallest = Math.min(...ruledEvidence.map((e) => e.margin ?? Infinity));
  for (const e of ruledEvidence) e.role = e.margin === smallest ? 'decisive' : 'supporting';
  const o = chain.outcome;
  const rel = o && o.error !== null && o.predicted !== null ? o.error / Math.max(Math.abs(o.predicted), 1e-9) : null;
  return {
    chain_id: chain.id,
    method: 'rule-margin analysis: the conclusion needs every rule to hold, so each piece of evidence a rule tests is necessary; the one whose value lies closest to its threshold (smallest relative margin |value - threshold| / |threshold|) is decisive, the others supporting; evidence no rule tests is context',
    evidence,
    decisive: evidence.filter((e) => e.role === 'decisive').map((e) => e.observation),
    missing_evidence: ruled.filter((i) => !byId.has(i.rule!.observation)).map((i) => i.id),
    prediction: chain.recommendation?.prediction ?? null,
    outcome: o,
    comparison: o ? { error: o.error, relative_error: rel, within_10_percent: rel === null ? null : Math.abs(rel) <= 0.1 } : null,
  };
}
