import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context } from '@opentelemetry/api';
import type { EventRow, EventType } from './events';
import { DURATION_BUCKETS_S, type Telemetry } from './service';

/** A stored row with the validated event it came from. */
export interface Stored {
  row: EventRow;
  event: Record<string, unknown>;
}

const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

/**
 * Records accepted events through the OpenTelemetry SDK: GenAI metrics and spans for LLM
 * calls (semantic conventions gen_ai.*), counts for the other kinds, and ingest counts.
 * Attribute objects are cached per label set, so a batch of similar events reuses them.
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

  constructor(private readonly telemetry: Telemetry) {
    const m = telemetry.meter;
    this.ingested = m.createCounter('telemetry.ingest.events', { description: 'Telemetry events received, by type and outcome (accepted, duplicate, rejected)' });
    this.tokens = m.createHistogram('gen_ai.client.token.usage', {
      description: 'Number of input and output tokens used (ingested LLM calls)',
      unit: '{token}',
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    });
    this.opDuration = m.createHistogram('gen_ai.client.operation.duration', {
      description: 'GenAI operation duration (ingested LLM calls)',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS_S },
    });
    this.cost = m.createCounter('gen_ai.client.cost', { description: 'Cost of ingested LLM calls in US dollars', unit: 'USD' });
    this.kernelTasks = m.createCounter('telemetry.kernel.tasks', { description: 'Ingested kernel task events, by kernel and status' });
    this.kernelDuration = m.createHistogram('telemetry.kernel.task.duration', {
      description: 'Duration of ingested kernel tasks',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS_S },
    });
    this.decisions = m.createCounter('telemetry.policy.decisions', { description: 'Ingested policy decisions, by policy and decision' });
    this.outcomes = m.createCounter('telemetry.outcomes', { description: 'Ingested outcomes, by name and result' });
    this.scores = m.createHistogram('telemetry.evaluation.score', {
      description: 'Ingested evaluation scores, by metric',
      advice: { explicitBucketBoundaries: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 2, 5, 10, 100] },
    });
  }

  private attrs(key: string, make: () => Attributes): Attributes {
    let a = this.attrCache.get(key);
    if (!a) {
      a = make();
      if (this.attrCache.size < 10_000) this.attrCache.set(key, a);
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
    // Costs are summed per label set over the batch: one counter add per model, not per event.
    const costs = new Map<Attributes, number>();
    for (const { row, event } of items) this.metrics(type, row, event, costs);
    for (const [attrs, usd] of costs) this.cost.add(usd, attrs);
    if (this.telemetry.otlpEnabled) for (const { row, event } of items) this.span(type, row, event);
  }

  private metrics(type: EventType, r: EventRow, event: Record<string, unknown>, costs: Map<Attributes, number>): void {
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
        if (r.input_tokens !== null) this.tokens.record(r.input_tokens, this.attrs(`t|${base}|in`, () => ({ ...common(), 'gen_ai.token.type': 'input' })));
        if (r.output_tokens !== null) this.tokens.record(r.output_tokens, this.attrs(`t|${base}|out`, () => ({ ...common(), 'gen_ai.token.type': 'output' })));
        const errorType = r.status === 'error' ? (e.error_type ?? '_OTHER') : '';
        this.opDuration.record(seconds!, this.attrs(`d|${base}|${errorType}`, () => ({ ...common(), ...(errorType ? { 'error.type': errorType } : {}) })));
        if (r.cost_usd) {
          const a = this.attrs(`c|${base}`, common);
          costs.set(a, (costs.get(a) ?? 0) + r.cost_usd);
        }
        break;
      }
      case 'kernel': {
        const a = this.attrs(`k|${r.kernel}|${r.status}`, () => ({ kernel: r.kernel!, status: r.status }));
        this.kernelTasks.add(1, a);
        if (seconds !== null) this.kernelDuration.record(seconds, a);
        break;
      }
      case 'policy':
        this.decisions.add(1, this.attrs(`p|${r.name}|${r.result}`, () => ({ policy: r.name, decision: r.result! })));
        break;
      case 'outcome':
        this.outcomes.add(1, this.attrs(`o|${r.name}|${r.result}`, () => ({ name: r.name, result: r.result! })));
        break;
      case 'evaluation':
        this.scores.record(r.value!, this.attrs(`e|${r.name}`, () => ({ metric: r.name })));
        break;
    }
  }

  /** One span per event, with the event's own trace, span and parent ids and times. */
  private span(type: EventType, r: EventRow, e: Record<string, unknown>): void {
    const start = Date.parse(r.ts);
    const attributes: Attributes = { ...((e.attributes as Attributes | undefined) ?? {}), 'telemetry.event.id': r.id, 'telemetry.event.type': type, 'tenant.id': r.tenant_id };
    let name = `${type} ${r.name}`;
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
