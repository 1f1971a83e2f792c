// The telemetry event store, provided by plugin `observability` (plugins/observability/store):
// ingest of the five event kinds, the ingest counts, and the window aggregates. Read by the
// operator console (ops-observability), aiops' model evidence, and whatever else takes
// events in (an OTLP receiver calls `ingest` as the HTTP routes do). Core keeps only the
// host's own telemetry (the OpenTelemetry SDK, /metrics/, kernel metrics: core/telemetry).
import { z } from 'zod';
import { Forbidden, invalid, type ValidationIssue } from '../errors';
import { createServiceRef } from '../plugin';
import type { Caller } from '../roles';

/**
 * The kinds of telemetry a pipeline pushes; the ingest path names the kind. `span` is any
 * other operation of a trace (the OTLP receiver stores every span that is not an LLM call
 * or a kernel task as one), so that a trace query shows the whole trace.
 */
export const EVENT_TYPES = ['llm-call', 'kernel', 'policy', 'outcome', 'evaluation', 'span'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The answer to one ingest call (the body of a 202). */
export interface IngestResult {
  accepted: number;
  duplicates: number;
  rejected: Array<{ index: number; detail: ValidationIssue[] }>;
  /** The id of each event in order (given or generated); null for a rejected one. */
  ids: Array<string | null>;
}

/** Ingest counts of one event kind (kept in the same transaction as the events). */
export interface IngestStats {
  type: string;
  accepted: number;
  duplicates: number;
  rejected: number;
  batches: number;
  last_ingest_at: string;
}

export interface HourlyEvents {
  tenant_id: string;
  type: string;
  model: string | null;
  hour: string;
  events: number;
  tokens: number;
}

/** One tenant's events in [since, until). */
export interface Window {
  tenantId: string;
  since: string;
  until: string;
}

const pct = z.object({ p50: z.number().nullable(), p95: z.number().nullable(), p99: z.number().nullable() });
const key = z.record(z.string(), z.string().nullable());
const windowSchema = z.object({ tenant_id: z.string(), since: z.string(), until: z.string() });

export const llmMetricsSchema = z.object({
  window: windowSchema,
  group_by: z.array(z.string()),
  totals: z.object({ count: z.number(), errors: z.number(), error_rate: z.number().nullable(), input_tokens: z.number(), output_tokens: z.number(), cost_usd: z.number() }),
  groups: z.array(
    z.object({
      key,
      count: z.number(),
      errors: z.number(),
      error_rate: z.number().nullable(),
      latency_ms: pct.extend({ avg: z.number().nullable(), max: z.number().nullable() }),
      input_tokens: z.number(),
      output_tokens: z.number(),
      cost_usd: z.number(),
    }),
  ),
});

export const policyMetricsSchema = z.object({
  window: windowSchema,
  group_by: z.array(z.string()),
  totals: z.object({ count: z.number(), by_decision: z.record(z.string(), z.number()) }),
  groups: z.array(z.object({ key, count: z.number(), share: z.number().nullable(), latency_ms: pct })),
});

export const outcomeMetricsSchema = z.object({
  window: windowSchema,
  group_by: z.array(z.string()),
  totals: z.object({ count: z.number(), success: z.number(), success_rate: z.number().nullable() }),
  groups: z.array(
    z.object({
      key,
      count: z.number(),
      success: z.number(),
      failure: z.number(),
      partial: z.number(),
      success_rate: z.number().nullable(),
      value: pct.extend({ sum: z.number().nullable(), avg: z.number().nullable() }),
    }),
  ),
});

export const evaluationMetricsSchema = z.object({
  window: windowSchema,
  group_by: z.array(z.string()),
  totals: z.object({ count: z.number() }),
  groups: z.array(
    z.object({
      key,
      count: z.number(),
      score: pct.extend({ avg: z.number().nullable(), min: z.number().nullable(), max: z.number().nullable() }),
      passed: z.number(),
      failed: z.number(),
      pass_rate: z.number().nullable(),
    }),
  ),
});

export type LlmMetrics = z.infer<typeof llmMetricsSchema>;
export type PolicyMetrics = z.infer<typeof policyMetricsSchema>;
export type OutcomeMetrics = z.infer<typeof outcomeMetricsSchema>;
export type EvaluationMetrics = z.infer<typeof evaluationMetricsSchema>;
export type MetricKind = Exclude<EventType, 'kernel' | 'span'>;

export interface TelemetryStore {
  /**
   * The one entry point of ingest, whatever the transport. `body` is one event or a batch
   * (`{events: [...]}`, at most telemetry.maxBatch) of kind `type`, in the field names of
   * the ingest routes; the events belong to `tenantId` (the authenticated caller's tenant).
   * Validates each event, stores the valid ones in one transaction (an id already stored
   * for the tenant, or repeated in the batch, is stored once and counted in `duplicates`),
   * records them through OpenTelemetry, and resolves only after the commit: what it
   * acknowledges is never lost. Throws Unprocessable (422) for a single bad event or a batch
   * with nothing valid, PayloadTooLarge (413) for a batch above telemetry.maxBatch.
   */
  ingest(type: EventType, tenantId: string, body: unknown): Promise<IngestResult>;
  /** Ingest counts per type for one tenant, or for every tenant (null). */
  stats(tenantId: string | null): Promise<IngestStats[]>;
  /** Stored events per type in a window. */
  countsByType(w: Window): Promise<Record<string, number>>;
  /** Stored events of a tenant since a time (and before `until` when given), of one kernel when `kernel` is given. */
  count(f: { tenantId: string; since: string; until?: string; kernel?: string }): Promise<number>;
  /** Stored events per tenant, UTC hour (`YYYY-MM-DDTHH`), type and model in [from, to): their count and LLM tokens (usage metering). */
  hourly(f: { from: string; to: string; tenantId?: string }): Promise<HourlyEvents[]>;
  /** `group_by` (a comma list, `none`, or absent for the kind's default) checked against the kind's names; 422 otherwise. */
  parseGroups(kind: MetricKind, text: string | undefined): string[];
  llmMetrics(w: Window, groups: string[]): Promise<LlmMetrics>;
  policyMetrics(w: Window, groups: string[]): Promise<PolicyMetrics>;
  outcomeMetrics(w: Window, groups: string[]): Promise<OutcomeMetrics>;
  evaluationMetrics(w: Window, groups: string[]): Promise<EvaluationMetrics>;
}

export const telemetryStoreRef = createServiceRef<TelemetryStore>('observability.store');

/**
 * The tenant whose telemetry a request reads: the caller's own, or for an admin user the
 * one named by `tenant_id`. Anyone else naming another tenant is refused.
 */
export function scopeTenant(caller: Caller, requested?: string): string {
  if (!requested || requested === caller.tenantId) return caller.tenantId;
  if (caller.kind === 'user' && caller.role === 'admin') return requested;
  throw new Forbidden('Only admins may read another tenant\'s telemetry');
}

const HOUR = 3600_000;
const iso = z.iso.datetime({ offset: true });

/** The query of an aggregate over a window (the query API's and the operator console's). */
export const windowQuery = z.object({
  since: iso.optional().describe('Start (inclusive); default: one hour before until'),
  until: iso.optional().describe('End (exclusive); default: now'),
  group_by: z.string().max(200).optional().describe('Comma-separated group names, or none'),
  tenant_id: z.string().min(1).max(64).optional().describe('Another tenant (admins only)'),
});

/** The resolved window of a query (one hour by default, at most 31 days) with its tenant. */
export function checkedWindow(q: { since?: string; until?: string }, tenantId: string): Window {
  const until = q.until ? new Date(q.until) : new Date();
  const since = q.since ? new Date(q.since) : new Date(until.getTime() - HOUR);
  // Checked on the resolved window, so that a `since` after the default `until` (now) is refused too.
  if (since >= until) throw invalid(['query', 'since'], 'since must be before until');
  if (until.getTime() - since.getTime() > 31 * 24 * HOUR) throw invalid(['query', 'since'], 'a window spans at most 31 days');
  return { since: since.toISOString(), until: until.toISOString(), tenantId };
}

// The window aggregates are served twice: by the query API (/observability/v1/query/metrics/*,
// viewers) and by the operator console (/ops/observability/*-metrics, operators). Both
// declare their routes with these parts (and a `telemetryStore` dependency), so that the
// query, the answer and the computation are one.
function metricsRoute<S extends z.ZodType>(kind: MetricKind, response: S, compute: (s: TelemetryStore, w: Window, groups: string[]) => Promise<z.input<S>>) {
  return {
    query: windowQuery,
    response,
    errors: [403],
    handler: ({ query, caller, services }: { query: z.output<typeof windowQuery>; caller: Caller | null; services: { telemetryStore: TelemetryStore } }) => {
      const s = services.telemetryStore;
      return compute(s, checkedWindow(query, scopeTenant(caller!, query.tenant_id)), s.parseGroups(kind, query.group_by));
    },
  };
}

/** Route parts (query, response, errors, handler) of each window aggregate. */
export const windowMetrics = {
  llmCalls: () => metricsRoute('llm-call', llmMetricsSchema, (s, w, g) => s.llmMetrics(w, g)),
  policyDecisions: () => metricsRoute('policy', policyMetricsSchema, (s, w, g) => s.policyMetrics(w, g)),
  outcomes: () => metricsRoute('outcome', outcomeMetricsSchema, (s, w, g) => s.outcomeMetrics(w, g)),
  evaluations: () => metricsRoute('evaluation', evaluationMetricsSchema, (s, w, g) => s.evaluationMetrics(w, g)),
};
