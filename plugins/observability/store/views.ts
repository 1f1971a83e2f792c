import type { Db } from '../../../core/db';
import { invalid } from '../../../core/errors';
import { aggregate, GROUP_COLUMNS, round, type Window } from './aggregates';
import type { EvaluationMetrics, EventType, LlmMetrics, OutcomeMetrics, PolicyMetrics } from '../../../core/contracts/telemetry';

// The metric aggregates the query API and the operations console show. Each reads one
// kind of event over a window, grouped by the names the caller asks for.

export const DEFAULT_GROUPS: Record<Exclude<EventType, 'kernel' | 'span'>, string[]> = {
  'llm-call': ['model'],
  policy: ['policy', 'decision'],
  outcome: ['name'],
  evaluation: ['metric'],
};

/** Parses `group_by` (comma list, or `none`) against the kind's allowed names; 422 otherwise. */
export function parseGroups(type: Exclude<EventType, 'kernel' | 'span'>, text: string | undefined): string[] {
  if (text === undefined || text === '') return DEFAULT_GROUPS[type];
  if (text === 'none') return [];
  const allowed = Object.keys(GROUP_COLUMNS[type]);
  const groups = [...new Set(text.split(',').map((s) => s.trim()).filter(Boolean))];
  const bad = groups.filter((g) => !allowed.includes(g));
  if (bad.length) throw invalid(['query', 'group_by'], `unknown group ${bad.join(', ')}; allowed: ${allowed.join(', ')} or none`);
  return groups;
}

const ratio = (a: number, b: number) => (b ? Math.round((a / b) * 10_000) / 10_000 : null);
const n = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));

export async function llmMetrics(db: Db, w: Window, groups: string[]): Promise<LlmMetrics> {
  const rows = await aggregate(db, 'llm-call', w, groups, {
    errors: "SUM(CASE WHEN status = 'error' THEN 1 ELSE 0 END)",
    input_tokens: 'SUM(input_tokens)',
    output_tokens: 'SUM(output_tokens)',
    cost_usd: 'SUM(cost_usd)',
    avg_ms: 'AVG(duration_ms)',
    max_ms: 'MAX(duration_ms)',
  }, 'duration_ms');
  const out = rows.map((r) => ({
    key: r.key,
    count: n(r.figures.count),
    errors: n(r.figures.errors),
    error_rate: ratio(n(r.figures.errors), n(r.figures.count)),
    latency_ms: { ...r.percentiles, avg: round(r.figures.avg_ms as number | null), max: round(r.figures.max_ms as number | null) },
    input_tokens: n(r.figures.input_tokens),
    output_tokens: n(r.figures.output_tokens),
    cost_usd: round(n(r.figures.cost_usd), 6)!,
  }));
  const sum = (f: (g: (typeof out)[number]) => number) => out.reduce((a, g) => a + f(g), 0);
  const count = sum((g) => g.count);
  const errors = sum((g) => g.errors);
  return {
    window: { tenant_id: w.tenantId, since: w.since, until: w.until },
    group_by: groups,
    totals: { count, errors, error_rate: ratio(errors, count), input_tokens: sum((g) => g.input_tokens), output_tokens: sum((g) => g.output_tokens), cost_usd: round(sum((g) => g.cost_usd), 6)! },
    groups: out,
  };
}

export async function policyMetrics(db: Db, w: Window, groups: string[]): Promise<PolicyMetrics> {
  const rows = await aggregate(db, 'policy', w, groups, {}, 'duration_ms');
  const byDecision = await aggregate(db, 'policy', w, ['decision'], {}, 'duration_ms');
  const total = byDecision.reduce((a, r) => a + n(r.figures.count), 0);
  return {
    window: { tenant_id: w.tenantId, since: w.since, until: w.until },
    group_by: groups,
    totals: { count: total, by_decision: Object.fromEntries(byDecision.map((r) => [r.key.decision ?? '', n(r.figures.count)])) },
    groups: rows.map((r) => ({ key: r.key, count: n(r.figures.count), share: ratio(n(r.figures.count), total), latency_ms: r.percentiles })),
  };
}

export async function outcomeMetrics(db: Db, w: Window, groups: string[]): Promise<OutcomeMetrics> {
  const rows = await aggregate(db, 'outcome', w, groups, {
    success: "SUM(CASE WHEN result = 'success' THEN 1 ELSE 0 END)",
    failure: "SUM(CASE WHEN result = 'failure' THEN 1 ELSE 0 END)",
    partial: "SUM(CASE WHEN result = 'partial' THEN 1 ELSE 0 END)",
    value_sum: 'SUM(value)',
    value_avg: 'AVG(value)',
  }, 'value');
  const out = rows.map((r) => ({
    key: r.key,
    count: n(r.figures.count),
    success: n(r.figures.success),
    failure: n(r.figures.failure),
    partial: n(r.figures.partial),
    success_rate: ratio(n(r.figures.success), n(r.figures.count)),
    value: { ...r.percentiles, sum: round(r.figures.value_sum as number | null), avg: round(r.figures.value_avg as number | null) },
  }));
  const count = out.reduce((a, g) => a + g.count, 0);
  const success = out.reduce((a, g) => a + g.success, 0);
  return { window: { tenant_id: w.tenantId, since: w.since, until: w.until }, group_by: groups, totals: { count, success, success_rate: ratio(success, count) }, groups: out };
}

export async function evaluationMetrics(db: Db, w: Window, groups: string[]): Promise<EvaluationMetrics> {
  const rows = await aggregate(db, 'evaluation', w, groups, {
    avg: 'AVG(value)',
    min: 'MIN(value)',
    max: 'MAX(value)',
    passed: "SUM(CASE WHEN result = 'passed' THEN 1 ELSE 0 END)",
    failed: "SUM(CASE WHEN result = 'failed' THEN 1 ELSE 0 END)",
  }, 'value');
  const out = rows.map((r) => ({
    key: r.key,
    count: n(r.figures.count),
    score: { ...r.percentiles, avg: round(r.figures.avg as number | null), min: round(r.figures.min as number | null), max: round(r.figures.max as number | null) },
    passed: n(r.figures.passed),
    failed: n(r.figures.failed),
    pass_rate: ratio(n(r.figures.passed), n(r.figures.passed) + n(r.figures.failed)),
  }));
  return { window: { tenant_id: w.tenantId, since: w.since, until: w.until }, group_by: groups, totals: { count: out.reduce((a, g) => a + g.count, 0) }, groups: out };
}
