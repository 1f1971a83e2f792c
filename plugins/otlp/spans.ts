// OTLP spans as our events: a span with gen_ai.* attributes is an llm-call, a span of our
// kernel tasks (as the service's own OTLP export writes them) is a kernel event, and every
// other span is a span event, so that a trace shows whole with its parent/child links.
import { attrLookup, attrsOf, MAX_ATTRS, type Attrs } from './attrs';
import { num, type Scope, type Span, type TraceRequest } from './proto';

export type SpanEventType = 'llm-call' | 'kernel' | 'span';
export type Event = Record<string, unknown>;

/** GenAI operations the llm-call kind knows (the others stay span events, nothing lost). */
const OPERATIONS = new Set(['chat', 'text_completion', 'embeddings', 'generate_content', 'execute_tool', 'create_agent', 'invoke_agent']);
const SPAN_KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];
const STATUS_ERROR = 2;
const MAX_DURATION_MS = 86_400_000;

// protobufjs decodes bytes as Buffers on Node.js; JSON's fromObject may give plain arrays.
const hex = (b: Uint8Array | null | undefined) => (!b || !b.length ? '' : Buffer.isBuffer(b) ? b.toString('hex') : Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex'));
const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
const count = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);
const cut = (s: string, max: number) => (s.length > max ? s.slice(0, max) : s);

// Spans of one request often start in the same millisecond: its text is made once.
let lastMs = -1;
let lastIso = '';
function isoOf(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/**
 * The event id of a span: its start (ms, 12 hex digits), trace and span ids. A span sent
 * twice has the same three, so it is stored once. The start leads so that new ids land
 * near the end of the store's key index, as generated (time-ordered) ids do: random ids
 * would touch a page of the index for every row of a commit.
 */
export const spanEventId = (startMs: number, traceId: string, spanId: string) => `${startMs.toString(16).padStart(12, '0')}-${traceId}-${spanId}`;

export interface MappedSpans {
  /** Events by kind, each with the index of its span in the request. */
  events: Record<SpanEventType, Array<{ index: number; event: Event }>>;
  /** Spans refused before storage: their index and why. */
  rejected: Array<{ index: number; reason: string }>;
  total: number;
}

/**
 * Maps every span of an export request. Spans that cannot be events (no ids, an end
 * before the start) are listed in `rejected` with the reason; the store's own validation
 * (time ranges, bounds) judges the rest.
 */
export function mapSpans(req: TraceRequest): MappedSpans {
  const out: MappedSpans = { events: { 'llm-call': [], kernel: [], span: [] }, rejected: [], total: 0 };
  for (const rs of req.resourceSpans ?? []) {
    const resource = attrsOf(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        const index = out.total++;
        const mapped = mapSpan(span, ss.scope ?? null, resource);
        if (typeof mapped === 'string') out.rejected.push({ index, reason: mapped });
        else out.events[mapped.type].push({ index, event: mapped.event });
      }
    }
  }
  return out;
}

/** One span as an event of its kind, or the reason it cannot be one. */
export function mapSpan(span: Span, scope: Scope | null, resource: Attrs): { type: SpanEventType; event: Event } | string {
  const traceId = hex(span.traceId);
  const spanId = hex(span.spanId);
  if (traceId.length !== 32) return `span "${span.name ?? ''}": trace_id must be 16 bytes`;
  if (spanId.length !== 16) return `span "${span.name ?? ''}": span_id must be 8 bytes`;
  const parent = hex(span.parentSpanId);
  if (parent && parent.length !== 16) return `span ${spanId}: parent_span_id must be 8 bytes`;
  const startNs = num(span.startTimeUnixNano);
  const endNs = num(span.endTimeUnixNano);
  if (!startNs) return `span ${spanId}: start_time_unix_nano is missing`;
  if (endNs < startNs) return `span ${spanId}: ends before it starts`;
  const durationMs = (endNs - startNs) / 1e6;
  if (durationMs > MAX_DURATION_MS) return `span ${spanId}: lasts more than a day`;

  const isError = span.status?.code === STATUS_ERROR;
  // The attributes as stored are also what the llm-call and kernel fields are read from.
  const attributes = attrsOf(span.attributes);
  const raw = attributes;
  const extra: Attrs = {};
  if (scope?.name) extra['otel.scope.name'] = cut(scope.name, 4096);
  if (span.status?.message) extra['otel.status_description'] = cut(span.status.message, 4096);
  const exception = span.events?.find((e) => e.name === 'exception');
  const exceptionType = exception ? str(attrLookup(exception.attributes).get('exception.type')) : undefined;
  for (const [k, v] of Object.entries(extra)) if (Object.keys(attributes).length < MAX_ATTRS && !(k in attributes)) attributes[k] = v;

  const startMs = Math.floor(startNs / 1e6);
  const base: Event = {
    id: spanEventId(startMs, traceId, spanId),
    trace_id: traceId,
    span_id: spanId,
    timestamp: isoOf(startMs),
    duration_ms: durationMs,
    status: isError ? 'error' : 'ok',
    attributes,
    resource,
  };
  // A root span has no parent field at all (the store reads a missing one as null).
  if (parent) base.parent_span_id = parent;
  const errorType = str(raw['error.type']) ?? (isError ? (exceptionType ?? '_OTHER') : undefined);
  if (errorType) base.error_type = cut(errorType, 128);

  const used = new Set<string>();
  const llm = llmFields(raw, used);
  if (llm) {
    // What the llm-call's own fields hold is not repeated in its attributes.
    const rest: Attrs = {};
    for (const k in attributes) if (!used.has(k)) rest[k] = attributes[k];
    base.attributes = rest;
    return { type: 'llm-call', event: Object.assign(base, llm) };
  }
  const kernel = str(raw['telemetry.kernel']);
  const task = str(raw['telemetry.task']);
  if (kernel && task && (raw['telemetry.event.type'] ?? 'kernel') === 'kernel') {
    const node = str(raw['telemetry.node']);
    base.kernel = cut(kernel, 64);
    base.task = cut(task, 128);
    if (node) base.node = cut(node, 128);
    return { type: 'kernel', event: base };
  }
  const service = str(resource['service.name']);
  base.name = cut(span.name || '(unnamed)', 128);
  base.span_kind = SPAN_KINDS[span.kind ?? 0] ?? 'unspecified';
  if (service) base.service = cut(service, 128);
  if (scope?.name) base.scope = cut(scope.name, 256);
  if (span.status?.message) base.status_message = cut(span.status.message, 2048);
  return { type: 'span', event: base };
}

/**
 * The llm-call fields of a span that follows the GenAI semantic conventions, or null when
 * it does not name a provider and a model (an agent or tool span then stays a span event).
 * Older attribute names (gen_ai.system, gen_ai.usage.prompt_tokens, ...) are read too.
 */
export function llmFields(raw: Attrs, used?: Set<string>): Event | null {
  let any = false;
  for (const k in raw) {
    if (k.startsWith('gen_ai.')) {
      any = true;
      break;
    }
  }
  if (!any) return null;
  // The first of the keys that holds a value of the kind asked for; the key is noted as used.
  const pick = <T>(as: (v: unknown) => T | undefined, ...keys: string[]): T | undefined => {
    for (const k of keys) {
      const v = as(raw[k]);
      if (v !== undefined) {
        used?.add(k);
        return v;
      }
    }
    return undefined;
  };
  const provider = pick(str, 'gen_ai.provider.name', 'gen_ai.system');
  const requestModel = pick(str, 'gen_ai.request.model', 'gen_ai.response.model');
  const operation = pick(str, 'gen_ai.operation.name') ?? 'chat';
  if (!provider || !requestModel || !OPERATIONS.has(operation)) {
    used?.clear();
    return null;
  }
  const out: Event = { operation, provider: cut(provider, 64), request_model: cut(requestModel, 128) };
  const responseModel = pick(str, 'gen_ai.response.model');
  if (responseModel) out.response_model = cut(responseModel, 128);
  const responseId = pick(str, 'gen_ai.response.id');
  if (responseId) out.response_id = cut(responseId, 256);
  const input = pick(count, 'gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens');
  if (input !== undefined) out.input_tokens = input;
  const output = pick(count, 'gen_ai.usage.output_tokens', 'gen_ai.usage.completion_tokens');
  if (output !== undefined) out.output_tokens = output;
  const finish = pick(reasonsOf, 'gen_ai.response.finish_reasons');
  if (finish) out.finish_reasons = finish;
  const temperature = pick((v) => (typeof v === 'number' && v >= 0 && v <= 10 ? v : undefined), 'gen_ai.request.temperature');
  if (temperature !== undefined) out.temperature = temperature;
  const maxTokens = pick(count, 'gen_ai.request.max_tokens');
  if (maxTokens !== undefined) out.max_tokens = maxTokens;
  const cost = pick((v) => (typeof v === 'number' && v >= 0 && v <= 1e6 ? v : undefined), 'gen_ai.usage.cost_usd', 'gen_ai.usage.cost');
  if (cost !== undefined) out.cost_usd = cost;
  return out;
}

function reasonsOf(v: unknown): string[] | undefined {
  const list = Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
  const out = list.filter((r): r is string => typeof r === 'string' && r.length > 0).slice(0, 16).map((r) => cut(r, 64));
  return out.length ? out : undefined;
}
