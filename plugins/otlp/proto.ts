// The OTLP messages, encoded and decoded with the protobufjs code that OpenTelemetry JS
// generated from the opentelemetry-proto definitions: @opentelemetry/otlp-transformer
// 0.214 is the last release that ships it (build/src/generated/root.js), installed under
// the alias otlp-transformer-protos so that it does not replace the SDK's own transformer.
import generated from 'otlp-transformer-protos/build/src/generated/root';

/** protobufjs's 64-bit integer (the `long` package), a number, or a decimal string from JSON. */
export type U64 = number | string | { toNumber(): number; toString(): string } | null | undefined;

export interface AnyValue {
  stringValue?: string | null;
  boolValue?: boolean | null;
  intValue?: U64;
  doubleValue?: number | null;
  arrayValue?: { values?: AnyValue[] | null } | null;
  kvlistValue?: { values?: KeyValue[] | null } | null;
  bytesValue?: Uint8Array | null;
}
export interface KeyValue {
  key?: string | null;
  value?: AnyValue | null;
}
export interface Resource {
  attributes?: KeyValue[] | null;
}
export interface Scope {
  name?: string | null;
  version?: string | null;
}

export interface Span {
  traceId?: Uint8Array | null;
  spanId?: Uint8Array | null;
  parentSpanId?: Uint8Array | null;
  name?: string | null;
  kind?: number | null;
  startTimeUnixNano?: U64;
  endTimeUnixNano?: U64;
  attributes?: KeyValue[] | null;
  events?: Array<{ name?: string | null; attributes?: KeyValue[] | null }> | null;
  links?: unknown[] | null;
  status?: { code?: number | null; message?: string | null } | null;
}
export interface TraceRequest {
  resourceSpans?: Array<{ resource?: Resource | null; scopeSpans?: Array<{ scope?: Scope | null; spans?: Span[] | null }> | null }> | null;
}

export interface NumberPoint {
  attributes?: KeyValue[] | null;
  startTimeUnixNano?: U64;
  timeUnixNano?: U64;
  asDouble?: number | null;
  asInt?: U64;
}
export interface HistogramPoint {
  attributes?: KeyValue[] | null;
  startTimeUnixNano?: U64;
  timeUnixNano?: U64;
  count?: U64;
  sum?: number | null;
  min?: number | null;
  max?: number | null;
  bucketCounts?: U64[] | null;
  explicitBounds?: number[] | null;
}
export interface Metric {
  name?: string | null;
  unit?: string | null;
  gauge?: { dataPoints?: NumberPoint[] | null } | null;
  sum?: { dataPoints?: NumberPoint[] | null; isMonotonic?: boolean | null; aggregationTemporality?: number | null } | null;
  histogram?: { dataPoints?: HistogramPoint[] | null; aggregationTemporality?: number | null } | null;
  exponentialHistogram?: { dataPoints?: unknown[] | null } | null;
  summary?: { dataPoints?: unknown[] | null } | null;
}
export interface MetricsRequest {
  resourceMetrics?: Array<{ resource?: Resource | null; scopeMetrics?: Array<{ scope?: Scope | null; metrics?: Metric[] | null }> | null }> | null;
}

export interface LogRecord {
  timeUnixNano?: U64;
  observedTimeUnixNano?: U64;
  severityNumber?: number | null;
  severityText?: string | null;
  body?: AnyValue | null;
  attributes?: KeyValue[] | null;
  traceId?: Uint8Array | null;
  spanId?: Uint8Array | null;
  eventName?: string | null;
}
export interface LogsRequest {
  resourceLogs?: Array<{ resource?: Resource | null; scopeLogs?: Array<{ scope?: Scope | null; logRecords?: LogRecord[] | null }> | null }> | null;
}

/** What a generated message type offers (protobufjs static code). */
interface MessageType<T> {
  decode(reader: Uint8Array): T;
  encode(message: unknown): { finish(): Uint8Array };
  fromObject(object: Record<string, unknown>): T;
}

interface Collector<Req> {
  request: MessageType<Req>;
  response: MessageType<unknown>;
}

const v1 = (generated as unknown as { opentelemetry: { proto: { collector: Record<string, { v1: Record<string, MessageType<unknown>> }> } } }).opentelemetry.proto.collector;

export type Signal = 'traces' | 'metrics' | 'logs';

export const collectors = {
  traces: { request: v1.trace.v1.ExportTraceServiceRequest, response: v1.trace.v1.ExportTraceServiceResponse } as Collector<TraceRequest>,
  metrics: { request: v1.metrics.v1.ExportMetricsServiceRequest, response: v1.metrics.v1.ExportMetricsServiceResponse } as Collector<MetricsRequest>,
  logs: { request: v1.logs.v1.ExportLogsServiceRequest, response: v1.logs.v1.ExportLogsServiceResponse } as Collector<LogsRequest>,
};

/** A 64-bit value as a number (nanosecond times lose nothing below the microsecond). */
export function num(v: U64): number {
  if (v === null || v === undefined) return 0;
  return typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : v.toNumber();
}
