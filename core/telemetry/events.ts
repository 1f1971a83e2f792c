import crypto from 'node:crypto';
import { z } from 'zod';

/** The five kinds of telemetry a pipeline pushes; the ingest path names the kind. */
export const EVENT_TYPES = ['llm-call', 'kernel', 'policy', 'outcome', 'evaluation'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

const hex = (n: number, what: string) =>
  z
    .string()
    .regex(new RegExp(`^[0-9a-fA-F]{${n}}$`), `${what}: ${n} hex characters`)
    .refine((s) => !/^0+$/.test(s), `${what} must not be all zeros`);

const DAY_MS = 86_400_000;
const name = (max = 128) => z.string().min(1).max(max);
const count = z.number().int().min(0).max(1e12);
const attrValue = z.union([
  z.string().max(4096),
  z.number(),
  z.boolean(),
  z.array(z.union([z.string().max(1024), z.number(), z.boolean()])).max(64),
]);

/** Fields every kind shares (W3C trace context ids; OTel attributes). */
export const commonFields = {
  /** Given by the pipeline (retries reuse it) or generated; unique per tenant. */
  id: z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/, 'id: 1-64 of A-Z a-z 0-9 . _ : -').optional(),
  trace_id: hex(32, 'trace_id').optional(),
  span_id: hex(16, 'span_id').optional(),
  parent_span_id: hex(16, 'parent_span_id').nullable().optional(),
  /** Start of the operation, ISO 8601 with a zone; now when left out. */
  timestamp: z.iso.datetime({ offset: true }).optional(),
  duration_ms: z.number().min(0).max(DAY_MS).optional(),
  status: z.enum(['ok', 'error']).optional(),
  /** OTel `error.type`; an event with one has status error. */
  error_type: name().optional(),
  /** The kernel (domain) the event belongs to, when any. */
  kernel: name(64).optional(),
  attributes: z
    .record(z.string().min(1).max(128), attrValue)
    .refine((a) => Object.keys(a).length <= 64, 'attributes: at most 64 keys')
    .optional(),
};

/** An LLM call, after the OpenTelemetry GenAI semantic conventions. */
export const llmCallSchema = z.strictObject({
  ...commonFields,
  /** gen_ai.operation.name */
  operation: z.enum(['chat', 'text_completion', 'embeddings', 'generate_content', 'execute_tool', 'create_agent', 'invoke_agent']).default('chat'),
  /** gen_ai.provider.name, e.g. openai, anthropic, aws.bedrock */
  provider: name(64),
  /** gen_ai.request.model */
  request_model: name(),
  /** gen_ai.response.model */
  response_model: name().optional(),
  /** gen_ai.response.id */
  response_id: name(256).optional(),
  /** gen_ai.usage.input_tokens / output_tokens */
  input_tokens: count.optional(),
  output_tokens: count.optional(),
  duration_ms: z.number().min(0).max(DAY_MS),
  cost_usd: z.number().min(0).max(1e6).optional(),
  /** gen_ai.response.finish_reasons */
  finish_reasons: z.array(name(64)).max(16).optional(),
  temperature: z.number().min(0).max(10).optional(),
  max_tokens: count.optional(),
});

/** One task run on a kernel. */
export const kernelSchema = z.strictObject({
  ...commonFields,
  kernel: name(64),
  node: name(128).optional(),
  task: name(),
  duration_ms: z.number().min(0).max(DAY_MS),
  queue_ms: z.number().min(0).max(DAY_MS).optional(),
});

/** A policy decision (guardrail, access rule, routing rule). */
export const policySchema = z.strictObject({
  ...commonFields,
  policy_id: name(),
  /** The decision, e.g. allow, deny, redact, escalate. */
  decision: name(64),
  subject: name(256).optional(),
  reason: z.string().max(2048).optional(),
});

/** The outcome of a piece of work (a task completed, a conversion, a resolution). */
export const outcomeSchema = z.strictObject({
  ...commonFields,
  name: name(),
  result: z.enum(['success', 'failure', 'partial', 'unknown']),
  value: z.number().min(-1e12).max(1e12).optional(),
  unit: name(32).optional(),
});

/** A score given to some output (faithfulness, toxicity, ...). */
export const evaluationSchema = z.strictObject({
  ...commonFields,
  metric: name(),
  score: z.number().min(-1e9).max(1e9),
  evaluator: name().optional(),
  /** The model whose output was evaluated. */
  model: name().optional(),
  passed: z.boolean().optional(),
  threshold: z.number().min(-1e9).max(1e9).optional(),
});

export const EVENT_SCHEMAS = {
  'llm-call': llmCallSchema,
  kernel: kernelSchema,
  policy: policySchema,
  outcome: outcomeSchema,
  evaluation: evaluationSchema,
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

const randomHex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');

/**
 * Turns a validated event into its row: fills in the id, trace and span ids (an event
 * without a trace becomes a one-span trace) and the timestamp, and normalises them.
 */
export function toRow(type: EventType, tenantId: string, e: Parsed, now: string): { row: EventRow; event: Record<string, unknown> } {
  const id = e.id ?? crypto.randomUUID();
  const trace_id = (e.trace_id ?? randomHex(16)).toLowerCase();
  const span_id = (e.span_id ?? randomHex(8)).toLowerCase();
  const parent = e.parent_span_id ? e.parent_span_id.toLowerCase() : null;
  const ts = e.timestamp ? new Date(e.timestamp).toISOString() : now;
  const status: 'ok' | 'error' = (e.status as 'ok' | 'error' | undefined) ?? (e.error_type ? 'error' : 'ok');
  const event = { ...e, id, trace_id, span_id, parent_span_id: parent, timestamp: ts, status };
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
    data: JSON.stringify(event),
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
  }
  return { row, event };
}

/** An event read back: the stored event with its type. */
export function fromRow(r: { type: string; tenant_id: string; data: string }): Record<string, unknown> {
  return { type: r.type, tenant_id: r.tenant_id, ...(JSON.parse(r.data) as Record<string, unknown>) };
}
