import crypto from 'node:crypto';
import type { EventType } from '../../../core/contracts/telemetry';
import type { Field, Spec } from './validate';

export { EVENT_TYPES, type EventType } from '../../../core/contracts/telemetry';

const DAY_MS = 86_400_000;
const str = (max = 128, min = 1): Field['rule'] => ({ t: 'str', min, max });
const req = (rule: Field['rule']): Field => ({ rule, required: true });
const opt = (rule: Field['rule']): Field => ({ rule });
const COUNT: Field['rule'] = { t: 'int', min: 0, max: 1e12 };
const DURATION: Field['rule'] = { t: 'num', min: 0, max: DAY_MS };

/** Fields every kind shares (W3C trace context ids; OTel attributes). */
export const commonFields: Spec = {
  /** Given by the pipeline (retries reuse it) or generated; unique per tenant. */
  id: opt({ t: 'str', min: 1, max: 64, re: /^[A-Za-z0-9._:-]+$/, reMsg: 'id: 1-64 of A-Z a-z 0-9 . _ : -' }),
  trace_id: opt({ t: 'hex', len: 32 }),
  span_id: opt({ t: 'hex', len: 16 }),
  parent_span_id: opt({ t: 'hex', len: 16, nullable: true }),
  /** Start of the operation, ISO 8601 with a zone; now when left out. */
  timestamp: opt({ t: 'iso' }),
  duration_ms: opt(DURATION),
  status: opt({ t: 'enum', values: ['ok', 'error'] }),
  /** OTel `error.type`; an event with one has status error. */
  error_type: opt(str()),
  /** The kernel (domain) the event belongs to, when any. */
  kernel: opt(str(64)),
  attributes: opt({ t: 'attrs' }),
  /** OTel resource attributes of the emitter (service.name, deployment.environment, ...). */
  resource: opt({ t: 'attrs' }),
};

export const GEN_AI_OPERATIONS = ['chat', 'text_completion', 'embeddings', 'generate_content', 'execute_tool', 'create_agent', 'invoke_agent'] as const;

/** An LLM call, after the OpenTelemetry GenAI semantic conventions (gen_ai.*). */
export const llmCallSpec: Spec = {
  ...commonFields,
  operation: { rule: { t: 'enum', values: GEN_AI_OPERATIONS }, default: 'chat' },
  provider: req(str(64)),
  request_model: req(str()),
  response_model: opt(str()),
  response_id: opt(str(256)),
  input_tokens: opt(COUNT),
  output_tokens: opt(COUNT),
  duration_ms: req(DURATION),
  cost_usd: opt({ t: 'num', min: 0, max: 1e6 }),
  finish_reasons: opt({ t: 'strs', maxItems: 16, maxLen: 64 }),
  temperature: opt({ t: 'num', min: 0, max: 10 }),
  max_tokens: opt(COUNT),
};

/** One task run on a kernel. */
export const kernelSpec: Spec = {
  ...commonFields,
  kernel: req(str(64)),
  node: opt(str()),
  task: req(str()),
  duration_ms: req(DURATION),
  queue_ms: opt(DURATION),
};

/** A policy decision (guardrail, access rule, routing rule). */
export const policySpec: Spec = {
  ...commonFields,
  policy_id: req(str()),
  /** The decision, e.g. allow, deny, redact, escalate. */
  decision: req(str(64)),
  subject: opt(str(256)),
  reason: opt(str(2048, 0)),
};

/** The outcome of a piece of work (a task completed, a conversion, a resolution). */
export const outcomeSpec: Spec = {
  ...commonFields,
  name: req(str()),
  result: req({ t: 'enum', values: ['success', 'failure', 'partial', 'unknown'] }),
  value: opt({ t: 'num', min: -1e12, max: 1e12 }),
  unit: opt(str(32)),
};

/** A score given to some output (faithfulness, toxicity, ...). */
export const evaluationSpec: Spec = {
  ...commonFields,
  metric: req(str()),
  score: req({ t: 'num', min: -1e9, max: 1e9 }),
  evaluator: opt(str()),
  /** The model whose output was evaluated. */
  model: opt(str()),
  passed: opt({ t: 'bool' }),
  threshold: opt({ t: 'num', min: -1e9, max: 1e9 }),
};

export const SPAN_KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'] as const;

/** Any other span of a trace (an HTTP call, a query, an agent step): its place in the trace and its timing. */
export const spanSpec: Spec = {
  ...commonFields,
  trace_id: req({ t: 'hex', len: 32 }),
  span_id: req({ t: 'hex', len: 16 }),
  name: req(str()),
  duration_ms: req(DURATION),
  span_kind: opt({ t: 'enum', values: SPAN_KINDS }),
  /** The emitter's service.name. */
  service: opt(str()),
  /** The instrumentation scope that made the span. */
  scope: opt(str(256)),
  status_message: opt(str(2048, 0)),
};

const withKeys = (spec: Spec) => ({ spec, keys: Object.keys(spec) });
export const EVENT_SPECS = {
  'llm-call': withKeys(llmCallSpec),
  kernel: withKeys(kernelSpec),
  policy: withKeys(policySpec),
  outcome: withKeys(outcomeSpec),
  evaluation: withKeys(evaluationSpec),
  span: withKeys(spanSpec),
} as const;

/** One row of telemetry_events, as stored. */
export interface EventRow {
  tenant_id: string;
  id: string;
  type: EventType;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  ts: string;
  duration_ms: number | null;
  status: 'ok' | 'error';
  /** llm-call: operation; kernel: task; policy: policy_id; outcome: name; evaluation: metric. */
  name: string;
  model: string | null;
  /** llm-call: provider; evaluation: evaluator. */
  provider: string | null;
  kernel: string | null;
  /** policy: decision; outcome: result. */
  result: string | null;
  /** outcome: value; evaluation: score. */
  value: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
  /** The event as accepted (with its id, ids and timestamp filled in), as JSON. */
  data: string;
}

export const ROW_COLUMNS: Array<keyof EventRow> = [
  'tenant_id', 'id', 'type', 'trace_id', 'span_id', 'parent_span_id', 'ts', 'duration_ms', 'status', 'name', 'model',
  'provider', 'kernel', 'result', 'value', 'input_tokens', 'output_tokens', 'cost_usd', 'data',
];

type Parsed = Record<string, unknown> & { id?: string; trace_id?: string; span_id?: string; parent_span_id?: string | null; timestamp?: string };

// Random bytes come from a pool refilled 8 KiB at a time: one call per byte string costs more.
let pool = Buffer.alloc(0);
let poolAt = 0;
function randomBytes(n: number): Buffer {
  if (poolAt + n > pool.length) {
    pool = crypto.randomBytes(8192);
    poolAt = 0;
  }
  const out = pool.subarray(poolAt, poolAt + n);
  poolAt += n;
  return out;
}
const randomHex = (bytes: number) => randomBytes(bytes).toString('hex');

/** A time-ordered UUID (version 7): generated ids land at the end of the dedupe index. */
export function uuidv7(ms = Date.now()): string {
  if (ms !== lastMs) {
    const t = ms.toString(16).padStart(12, '0');
    lastMs = ms;
    timePart = `${t.slice(0, 8)}-${t.slice(8, 12)}-7`;
  }
  // 76 random bits: 3 hex digits after the version, 2 bits under the variant, 62 after.
  const h = randomHex(10);
  return `${timePart}${h.slice(1, 4)}-${VARIANT[parseInt(h[4], 16) & 3]}${h.slice(5, 8)}-${h.slice(8, 20)}`;
}
let lastMs = -1;
let timePart = '';
const VARIANT = ['8', '9', 'a', 'b'];

/**
 * Turns a validated event into its row: fills in the id, trace and span ids (an event
 * without a trace becomes a one-span trace) and the timestamp, and normalises them.
 */
export function toRow(type: EventType, tenantId: string, e: Parsed, now: string): { row: EventRow; event: Record<string, unknown> } {
  const id = e.id ?? uuidv7();
  const trace_id = (e.trace_id ?? randomHex(16)).toLowerCase();
  const span_id = (e.span_id ?? randomHex(8)).toLowerCase();
  const parent = e.parent_span_id ? e.parent_span_id.toLowerCase() : null;
  const ts = e.timestamp ? new Date(e.timestamp).toISOString() : now;
  const status: 'ok' | 'error' = (e.status as 'ok' | 'error' | undefined) ?? (e.error_type ? 'error' : 'ok');
  // The validated event is the request's own parsed object: completed in place, not copied.
  const event = e as Record<string, unknown>;
  event.id = id;
  event.trace_id = trace_id;
  event.span_id = span_id;
  event.parent_span_id = parent;
  event.timestamp = ts;
  event.status = status;
  const row: EventRow = {
    tenant_id: tenantId,
    id,
    type,
    trace_id,
    span_id,
    parent_span_id: parent,
    ts,
    duration_ms: (e.duration_ms as number | undefined) ?? null,
    status,
    name: '',
    model: null,
    provider: null,
    kernel: (e.kernel as string | undefined) ?? null,
    result: null,
    value: null,
    input_tokens: null,
    output_tokens: null,
    cost_usd: null,
    data: '',
  };
  switch (type) {
    case 'llm-call':
      row.name = e.operation as string;
      row.model = (e.response_model ?? e.request_model) as string;
      row.provider = e.provider as string;
      row.input_tokens = (e.input_tokens as number | undefined) ?? null;
      row.output_tokens = (e.output_tokens as number | undefined) ?? null;
      row.cost_usd = (e.cost_usd as number | undefined) ?? null;
      break;
    case 'kernel':
      row.name = e.task as string;
      break;
    case 'policy':
      row.name = e.policy_id as string;
      row.result = e.decision as string;
      break;
    case 'outcome':
      row.name = e.name as string;
      row.result = e.result as string;
      row.value = (e.value as number | undefined) ?? null;
      break;
    case 'evaluation':
      row.name = e.metric as string;
      row.value = e.score as number;
      row.model = (e.model as string | undefined) ?? null;
      row.provider = (e.evaluator as string | undefined) ?? null;
      row.result = e.passed === undefined ? null : e.passed ? 'passed' : 'failed';
      break;
    case 'span':
      row.name = e.name as string;
      break;
  }
  // Only what the columns do not hold goes into `data`: a third of the bytes to write.
  const inColumns = IN_COLUMNS[type];
  const rest: Record<string, unknown> = {};
  for (const k in event) if (!inColumns.has(k)) rest[k] = event[k];
  row.data = JSON.stringify(rest);
  return { row, event };
}

const SHARED_IN_COLUMNS = ['id', 'trace_id', 'span_id', 'parent_span_id', 'timestamp', 'duration_ms', 'status', 'kernel'];
/** Event fields stored in their own columns (and rebuilt from them by fromRow). */
const IN_COLUMNS: Record<EventType, Set<string>> = {
  'llm-call': new Set([...SHARED_IN_COLUMNS, 'operation', 'provider', 'input_tokens', 'output_tokens', 'cost_usd']),
  kernel: new Set([...SHARED_IN_COLUMNS, 'task']),
  policy: new Set([...SHARED_IN_COLUMNS, 'policy_id', 'decision']),
  outcome: new Set([...SHARED_IN_COLUMNS, 'name', 'result', 'value']),
  evaluation: new Set([...SHARED_IN_COLUMNS, 'metric', 'score', 'model', 'evaluator', 'passed']),
  span: new Set([...SHARED_IN_COLUMNS, 'name']),
};

/** The columns fromRow needs. */
export const READ_COLUMNS = [
  'tenant_id', 'id', 'type', 'trace_id', 'span_id', 'parent_span_id', 'ts', 'duration_ms', 'status', 'name', 'model', 'provider', 'kernel',
  'result', 'value', 'input_tokens', 'output_tokens', 'cost_usd', 'data',
] as const;

type StoredRow = Record<(typeof READ_COLUMNS)[number], unknown>;
const numOrUndef = (v: unknown) => (v === null || v === undefined ? undefined : Number(v));

/** An event read back, as it was accepted (fields from the columns, the rest from `data`), with its type. */
export function fromRow(r: StoredRow): Record<string, unknown> {
  const e: Record<string, unknown> = {
    type: r.type,
    tenant_id: r.tenant_id,
    id: r.id,
    trace_id: r.trace_id,
    span_id: r.span_id,
    parent_span_id: r.parent_span_id ?? null,
    timestamp: r.ts,
    status: r.status,
  };
  if (r.duration_ms !== null && r.duration_ms !== undefined) e.duration_ms = Number(r.duration_ms);
  if (r.kernel !== null && r.kernel !== undefined) e.kernel = r.kernel;
  switch (r.type as EventType) {
    case 'llm-call':
      Object.assign(e, { operation: r.name, provider: r.provider, input_tokens: numOrUndef(r.input_tokens), output_tokens: numOrUndef(r.output_tokens), cost_usd: numOrUndef(r.cost_usd) });
      break;
    case 'kernel':
      e.task = r.name;
      break;
    case 'policy':
      Object.assign(e, { policy_id: r.name, decision: r.result });
      break;
    case 'outcome':
      Object.assign(e, { name: r.name, result: r.result, value: numOrUndef(r.value) });
      break;
    case 'evaluation':
      Object.assign(e, { metric: r.name, score: Number(r.value), model: r.model ?? undefined, evaluator: r.provider ?? undefined });
      if (r.result) e.passed = r.result === 'passed';
      break;
    case 'span':
      e.name = r.name;
      break;
  }
  Object.assign(e, JSON.parse(String(r.data)) as Record<string, unknown>);
  for (const k of Object.keys(e)) if (e[k] === undefined) delete e[k];
  return e;
}


