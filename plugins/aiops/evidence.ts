// Measured figures of registered models, from the telemetry store: llm-call events (latency,
// tokens, errors, cost) and evaluation events (scores), matched on the model's name.
import type { Model } from '../../core/contracts/models';
import type { TelemetryStore } from '../../core/contracts/telemetry';
import { fromMicros, toMicros } from '../../core/money';

export interface Window {
  since: string;
  until: string;
}

const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

export interface Evidence {
  model_id: string;
  name: string;
  version: string;
  calls: number;
  errors: number;
  error_rate: number | null;
  input_tokens: number;
  output_tokens: number;
  latency_ms: { p50: number | null; p95: number | null; p99: number | null; avg: number | null };
  cost: { telemetry_usd: string; priced: string; currency: string; per_call_usd: number | null; per_call_source: 'telemetry' | 'price' | null };
  evaluations: Array<{ metric: string; count: number; avg: number | null; p50: number | null; pass_rate: number | null }>;
}

/** Cost of tokens at a model's registry price, in the price's currency (micro-units). */
export function pricedMicros(m: Model, input: number, output: number): number {
  const inP = toMicros(m.price.input_per_million, ['price']);
  const outP = toMicros(m.price.output_per_million, ['price']);
  return Math.round((input * inP + output * outP) / 1e6);
}

/** The evidence of each model over a window: two grouped queries for all of them. */
export async function evidenceOf(store: TelemetryStore, tenantId: string, models: Model[], w: Window): Promise<Evidence[]> {
  const win = { tenantId, since: w.since, until: w.until };
  const llm = await store.llmMetrics(win, ['model']);
  const ev = await store.evaluationMetrics(win, ['model', 'metric']);
  return models.map((m) => {
    const g = llm.groups.find((x) => x.key.model === m.name);
    const calls = g?.count ?? 0;
    const priced = g ? pricedMicros(m, g.input_tokens, g.output_tokens) : 0;
    const telemetryUsd = g?.cost_usd ?? 0;
    // Telemetry's own cost when the pipeline reported one; otherwise the registry price of the tokens (USD prices only).
    const perCall = !calls ? null : telemetryUsd > 0 ? r6(telemetryUsd / calls) : m.price.currency === 'USD' ? r6(priced / 1e6 / calls) : null;
    return {
      model_id: m.id,
      name: m.name,
      version: m.version,
      calls,
      errors: g?.errors ?? 0,
      error_rate: g?.error_rate ?? null,
      input_tokens: g?.input_tokens ?? 0,
      output_tokens: g?.output_tokens ?? 0,
      latency_ms: { p50: g?.latency_ms.p50 ?? null, p95: g?.latency_ms.p95 ?? null, p99: g?.latency_ms.p99 ?? null, avg: g?.latency_ms.avg ?? null },
      cost: {
        telemetry_usd: fromMicros(Math.round(telemetryUsd * 1e6)),
        priced: fromMicros(priced),
        currency: m.price.currency,
        per_call_usd: perCall,
        per_call_source: perCall === null ? null : telemetryUsd > 0 ? 'telemetry' : 'price',
      },
      evaluations: ev.groups
        .filter((x) => x.key.model === m.name)
        .map((x) => ({ metric: x.key.metric ?? '', count: x.count, avg: x.score.avg, p50: x.score.p50, pass_rate: x.pass_rate })),
    };
  });
}

export interface RouteRequest {
  task: string;
  max_latency_ms?: number;
  max_cost_usd?: number;
  min_quality?: number;
  quality_metric?: string;
  prefer: 'cost' | 'latency' | 'quality';
  min_calls: number;
}

/** Quality of a model: the average score of one metric, or the mean of its metrics' averages. */
export function qualityOf(e: Evidence, metric?: string): number | null {
  const evs = e.evaluations.filter((x) => x.avg !== null && (!metric || x.metric === metric));
  if (!evs.length) return null;
  return r6(evs.reduce((a, x) => a + x.avg!, 0) / evs.length);
}

/**
 * Keeps the models whose measurements meet every limit of the request, each refused one with
 * its reasons; orders the rest by the preference (ties: cost, then p95 latency, then quality).
 */
export function choose(evidence: Evidence[], req: RouteRequest) {
  const rows = evidence.map((e) => {
    const quality = qualityOf(e, req.quality_metric);
    const reasons: string[] = [];
    if (e.calls < req.min_calls) reasons.push(`${e.calls} measured calls in the window, fewer than ${req.min_calls}`);
    else {
      if (req.max_latency_ms !== undefined && (e.latency_ms.p95 === null || e.latency_ms.p95 > req.max_latency_ms)) reasons.push(`p95 latency ${e.latency_ms.p95} ms above max_latency_ms ${req.max_latency_ms}`);
      if (req.max_cost_usd !== undefined && (e.cost.per_call_usd === null || e.cost.per_call_usd > req.max_cost_usd)) reasons.push(`cost per call ${e.cost.per_call_usd ?? 'unknown'} USD above max_cost_usd ${req.max_cost_usd}`);
      if (req.min_quality !== undefined && (quality === null || quality < req.min_quality)) reasons.push(quality === null ? `no evaluation scores${req.quality_metric ? ` for ${req.quality_metric}` : ''}` : `quality ${quality} below min_quality ${req.min_quality}`);
    }
    return { evidence: e, quality, reasons };
  });
  const key = (r: (typeof rows)[number]) => {
    const cost = r.evidence.cost.per_call_usd ?? Infinity;
    const lat = r.evidence.latency_ms.p95 ?? Infinity;
    const q = -(r.quality ?? -Infinity);
    return req.prefer === 'latency' ? [lat, cost, q] : req.prefer === 'quality' ? [q, cost, lat] : [cost, lat, q];
  };
  const eligible = rows.filter((r) => !r.reasons.length).sort((a, b) => {
    const [ka, kb] = [key(a), key(b)];
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i]! - kb[i]!;
    return 0;
  });
  return { eligible, refused: rows.filter((r) => r.reasons.length) };
}
