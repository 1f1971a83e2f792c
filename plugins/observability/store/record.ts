import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Counter } from '@opentelemetry/api';
import type { EventRow, EventType } from './events';
import { DURATION_BUCKETS_S, type Telemetry } from '../../../core/telemetry/service';

/** Counter additions of one batch, summed per counter and label set. */
class Sums {
  private readonly byCounter = new Map<Counter, Map<Attributes, number>>();

  add(counter: Counter, attrs: Attributes, n: number): void {
    let m = this.byCounter.get(counter);
    if (!m) this.byCounter.set(counter, (m = new Map()));
    m.set(attrs, (m.get(attrs) ?? 0) + n);
  }

  flush(): void {
    for (const [counter, m] of this.byCounter) for (const [attrs, n] of m) counter.add(n, attrs);
  }
}

/** A stored row with the validated event it came from. */
export interface Stored {
  row: EventRow;
  event: Record<string, unknown>;
}

export const ATTR_CACHE_MAX = 10_000;

const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

/**
 * Records accepted events through the OpenTelemetry SDK: GenAI metrics and spans for LLM
 * calls (semantic conventions gen_ai.*), counts for the other kinds, and ingest counts.
 * Histograms are keyed series (histograms.ts); counter attribute objects are cached per label
 * set, so a batch of similar events reuses them.
 */
export class EventRecorder {
  private readonly ingested;
  private readonly tokens;
  private readonly opDuration;
  private readonly cost;
  private readonly kernelTasks;
  private readonly kernelDuration;
  private readonly decisions;
  private readonly outcomes;
  private readonly scores;
  private readonly attrCache = new Map<string, Attributes>();

  /** Label sets remembered (at most ATTR_CACHE_MAX). */
  get rememberedLabelSets(): number {
    return this.attrCache.size;
  }

  constructor(private readonly telemetry: Telemetry) {
    const m = telemetry.meter;
    const h = telemetry.keyedHistograms;
    this.ingested = m.createCounter('telemetry.ingest.events', { description: 'Telemetry events received, by type and outcome (accepted, duplicate, rejected)' });
    this.tokens = h.create('gen_ai.client.token.usage', { description: 'Number of input and output tokens used (ingested LLM calls)', unit: '{token}', boundaries: TOKEN_BUCKETS });
    this.opDuration = h.create('gen_ai.client.operation.duration', { description: 'GenAI operation duration (ingested LLM calls)', unit: 's', boundaries: DURATION_BUCKETS_S });
    this.cost = m.createCounter('gen_ai.client.cost', { description: 'Cost of ingested LLM calls in US dollars', unit: 'USD' });
    this.kernelTasks = m.createCounter('telemetry.kernel.tasks', { description: 'Ingested kernel task events, by kernel and status' });
    this.kernelDuration = h.create('telemetry.kernel.task.duration', { description: 'Duration of ingested kernel tasks', unit: 's', boundaries: DURATION_BUCKETS_S });
    this.decisions = m.createCounter('telemetry.policy.decisions', { description: 'Ingested policy decisions, by policy and decision' });
    this.outcomes = m.createCounter('telemetry.outcomes', { description: 'Ingested outcomes, by name and result' });
    this.scores = h.create('telemetry.evaluation.score', {
      description: 'Ingested evaluation scores, by metric',
      boundaries: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 2, 5, 10, 100],
    });
  }

  private attrs(key: string, make: () => Attributes): Attributes {
    let a = this.attrCache.get(key);
    if (!a) {
      a = make();
      if (this.attrCache.size < ATTR_CACHE_MAX) this.attrCache.set(key, a);
    }
    return a;
  }

  /** Counts a batch's outcome. */
  counted(type: EventType, accepted: number, duplicates: number, rejected: number): void {
    if (accepted) this.ingested.add(accepted, this.attrs(`i|${type}|a`, () => ({ type, outcome: 'accepted' })));
    if (duplicates) this.ingested.add(duplicates, this.attrs(`i|${type}|d`, () => ({ type, outcome: 'duplicate' })));
    if (rejected) this.ingested.add(rejected, this.attrs(`i|${type}|r`, () => ({ type, outcome: 'rejected' })));
  }

  /** Metrics (always) and spans (when an exporter takes them) of newly stored events. */
  record(type: EventType, items: Stored[]): void {
    // Counters are summed per label set over the batch: one add per label set, not per event.
    const sums = new Sums();
    for (const { row, event } of items) this.metrics(type, row, event, sums);
    sums.flush();
    if (this.telemetry.otlpEnabled) for (const { row, event } of items) this.span(type, row, event);
  }

  private metrics(type: EventType, r: EventRow, event: Record<string, unknown>, sums: Sums): void {
    const seconds = r.duration_ms === null ? null : r.duration_ms / 1000;
    switch (type) {
      case 'llm-call': {
        const e = event as { request_model: string; response_model?: string; error_type?: string };
        const base = `${r.name}|${r.provider}|${e.request_model}|${e.response_model ?? ''}`;
        const common = () => ({
          'gen_ai.operation.name': r.name,
          'gen_ai.provider.name': r.provider!,
          'gen_ai.request.model': e.request_model,
          ...(e.response_model ? { 'gen_ai.response.model': e.response_model } : {}),
        });
        if (r.input_tokens !== null) this.tokens.record(`${base}|in`, () => ({ ...common(), 'gen_ai.token.type': 'input' }), r.input_tokens);
        if (r.output_tokens !== null) this.tokens.record(`${base}|out`, () => ({ ...common(), 'gen_ai.token.type': 'output' }), r.output_tokens);
        const errorType = r.status === 'error' ? (e.error_type ?? '_OTHER') : '';
        this.opDuration.record(errorType ? `${base}|${errorType}` : base, () => ({ ...common(), ...(errorType ? { 'error.type': errorType } : {}) }), seconds!);
        if (r.cost_usd) sums.add(this.cost, this.attrs(`c|${base}`, common), r.cost_usd);
        break;
      }
      case 'kernel': {
        const key = `${r.kernel}|${r.status}`;
        const make = () => ({ kernel: r.kernel!, status: r.status });
        sums.add(this.kernelTasks, this.attrs(`k|${key}`, make), 1);
        if (seconds !== null) this.kernelDuration.record(key, make, seconds);
        break;
      }
      case 'policy':
        sums.add(this.decisions, this.attrs(`p|${r.name}|${r.result}`, () => ({ policy: r.name, decision: r.result! })), 1);
        break;
      case 'outcome':
        sums.add(this.outcomes, this.attrs(`o|${r.name}|${r.result}`, () => ({ name: r.name, result: r.result! })), 1);
        break;
      case 'evaluation':
        this.scores.record(r.name, () => ({ metric: r.name }), r.value!);
        break;
    }
  }

  /** One span per event, with the event's own trace, span and parent ids and times. */
  private span(type: EventType, r: EventRow, e: Record<string, unknown>): void {
    const start = Date.parse(r.ts);
    const attributes: Attributes = { ...((e.attributes as Attributes | undefined) ?? {}), 'telemetry.event.id': r.id, 'telemetry.event.type': type, 'tenant.id': r.tenant_id };
    let name = type === 'span' ? r.name : `${type} ${r.name}`;
    let kind = SpanKind.INTERNAL;
    if (type === 'llm-call') {
      kind = SpanKind.CLIENT;
      name = `${r.name} ${e.request_model as string}`;
      Object.assign(attributes, {
        'gen_ai.operation.name': r.name,
        'gen_ai.provider.name': r.provider!,
        'gen_ai.request.model': e.request_model as string,
        ...(e.response_model ? { 'gen_ai.response.model': e.response_model as string } : {}),
        ...(e.response_id ? { 'gen_ai.response.id': e.response_id as string } : {}),
        ...(r.input_tokens !== null ? { 'gen_ai.usage.input_tokens': r.input_tokens } : {}),
        ...(r.output_tokens !== null ? { 'gen_ai.usage.output_tokens': r.output_tokens } : {}),
        ...(e.finish_reasons ? { 'gen_ai.response.finish_reasons': e.finish_reasons as string[] } : {}),
        ...(e.temperature !== undefined ? { 'gen_ai.request.temperature': e.temperature as number } : {}),
        ...(e.max_tokens !== undefined ? { 'gen_ai.request.max_tokens': e.max_tokens as number } : {}),
        ...(r.cost_usd !== null ? { 'gen_ai.usage.cost_usd': r.cost_usd } : {}),
      });
    } else {
      for (const k of ['kernel', 'node', 'task', 'policy_id', 'decision', 'name', 'result', 'value', 'metric', 'score', 'evaluator', 'passed'] as const) {
        const v = e[k];
        if (v !== undefined && v !== null && typeof v !== 'object') attributes[`telemetry.${k}`] = v as string | number | boolean;
      }
    }
    if (e.error_type) attributes['error.type'] = e.error_type as string;
    const parent: Context = r.parent_span_id
      ? trace.setSpanContext(ROOT_CONTEXT, { traceId: r.trace_id, spanId: r.parent_span_id, traceFlags: 1, isRemote: true })
      : ROOT_CONTEXT;
    const span = this.telemetry.withSpanIds(r.trace_id, r.span_id, () =>
      this.telemetry.tracer.startSpan(name, { kind, startTime: start, attributes }, parent),
    );
    if (r.status === 'error') span.setStatus({ code: SpanStatusCode.ERROR, message: (e.error_type as string | undefined) ?? undefined });
    span.end(start + (r.duration_ms ?? 0));
  }
}
