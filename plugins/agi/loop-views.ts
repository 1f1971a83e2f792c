// Read views over the planning loop's records: the plan, the progress of applied actions and
// the loop's own figures. Every KPI the loop acts on is lower-is-better (latency, error rate,
// burn rate, open incidents), so an improvement is the value before less the value after.
import type { Metric } from '../../core/contracts/insights';
import type { LoopFigures, Plan, Progress } from '../../core/contracts/planning';
import { toChain } from './insights';
import { LOOP_AGENT, toIteration, type PlanningService } from './loop';

const MAX_ROWS = 10_000;

async function loopChains(s: PlanningService, tenantId: string) {
  const rows = await s.db('agi_chains').where({ tenant_id: tenantId, agent_id: LOOP_AGENT }).orderBy('created_at', 'desc').limit(MAX_ROWS);
  return rows.map(toChain);
}

export async function planOf(s: PlanningService, tenantId: string): Promise<Plan> {
  const rows = await s.db('agi_iterations').where({ tenant_id: tenantId }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(50);
  const its = rows.map(toIteration);
  const ids = its.flatMap((i) => i.decisions.map((d) => d.approval_id).filter((x): x is string => !!x));
  const states = new Map<string, string>();
  const now = s.clock.now().toISOString();
  // A pending request past its expiry is expired (the approval store marks it so when read).
  if (ids.length) for (const a of await s.db('agi_approvals').whereIn('id', ids).select('id', 'state', 'expires_at')) states.set(a.id, a.state === 'pending' && a.expires_at <= now ? 'expired' : a.state);
  const latest = its[0];
  return {
    iteration_id: latest?.id ?? null,
    generated_at: latest?.created_at ?? null,
    objectives: latest?.objectives ?? [],
    actions: its.flatMap((i) => i.decisions.map((d) => ({ ...d, iteration_id: i.id, decided_at: i.created_at, approval_state: d.approval_id ? states.get(d.approval_id) ?? null : null }))),
  };
}

export async function progressOf(s: PlanningService, tenantId: string): Promise<Progress> {
  const items: Progress['items'] = [];
  for (const c of await loopChains(s, tenantId)) {
    if (c.decision.state !== 'applied' || !c.recommendation?.prediction) continue;
    const p = c.recommendation.prediction;
    const before = c.observations.find((o) => o.metric === p.metric)?.value ?? null;
    let now: number | null = null;
    try {
      now = (await s.kpis.measure(tenantId, p.metric as Metric, p.params)).value;
    } catch {
      // The kernel measured then no longer exists.
    }
    items.push({ chain_id: c.id, kind: c.recommendation.action, target: c.recommendation.target ?? '', metric: p.metric, params: p.params, before, predicted: p.value, after: c.outcome?.value ?? null, now, change: before !== null && now !== null ? now - before : null, applied_at: c.decision.at });
  }
  return {
    method: "for each action the loop applied: the KPI it targeted as measured when it was decided (before), as predicted, at its outcome (measured at the first iteration or progress read after it was applied) and now, each over the loop's window ending at that moment; change = now - before",
    items,
  };
}

export async function loopFigures(s: PlanningService, tenantId: string): Promise<LoopFigures> {
  const chains = await loopChains(s, tenantId);
  const approvals = await s.db('agi_approvals').where({ tenant_id: tenantId, origin: `agent:${LOOP_AGENT}` }).select('state');
  const count = (...st: string[]) => approvals.filter((a) => st.includes(a.state)).length;
  const approved = count('executed', 'failed');
  const rejected = count('rejected');
  const settled = chains.filter((c) => c.outcome && c.outcome.error !== null);
  const value: Record<string, number> = {};
  let applied = 0;
  for (const c of chains) {
    if (c.decision.state !== 'applied') continue;
    applied++;
    const p = c.recommendation?.prediction;
    const before = p ? c.observations.find((o) => o.metric === p.metric)?.value ?? null : null;
    if (p && before !== null && c.outcome?.value !== null && c.outcome?.value !== undefined) value[p.metric] = (value[p.metric] ?? 0) + (before - c.outcome.value);
  }
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  const iterations = (await s.db('agi_iterations').where({ tenant_id: tenantId }).count({ n: '*' }).first()) as { n: unknown } | undefined;
  return {
    method: 'counted from the loop agent\'s insight chains and approval requests of this tenant; acceptance = approved / (approved + rejected) of decided requests; prediction error = outcome - prediction of settled chains; value = before - outcome of applied changes, per KPI (all lower-is-better)',
    decisions: chains.length,
    actions_proposed: approvals.length,
    approved,
    rejected,
    expired: count('expired'),
    pending: count('pending'),
    acceptance_rate: approved + rejected ? approved / (approved + rejected) : null,
    predictions_settled: settled.length,
    mean_absolute_prediction_error: mean(settled.map((c) => Math.abs(c.outcome!.error!))),
    mean_relative_prediction_error: mean(settled.map((c) => Math.abs(c.outcome!.error!) / Math.max(Math.abs(c.outcome!.predicted ?? 0), 1e-9))),
    applied_changes: applied,
    value_of_applied_changes: value,
    iterations: Number(iterations?.n ?? 0),
  };
}
