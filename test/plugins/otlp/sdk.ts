// The real OpenTelemetry JS SDK and its OTLP exporters, pointed at a test host: spans,
// metrics and logs are made by the SDK and sent by its exporters, unchanged.
import { context, trace, type Span } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, type LogRecordProcessor, type SdkLogRecord } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';

export type Encoding = 'protobuf' | 'json';
export const resource = resourceFromAttributes({ 'service.name': 'chat-gateway', 'deployment.environment': 'test' });

/** Keeps ended spans, to hand them to an exporter and read its result. */
class Collect implements SpanProcessor {
  spans: ReadableSpan[] = [];
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    this.spans.push(span);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export interface Target {
  /** Base URL of the receiver, e.g. http://127.0.0.1:1234/otlp */
  base: string;
  headers: Record<string, string>;
  gzip?: boolean;
}

const compression = (t: Target) => (t.gzip ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE);
const exported = (run: (done: (r: ExportResult) => void) => void) => new Promise<ExportResult>((resolve) => run(resolve));

export function traceExporter(t: Target, encoding: Encoding) {
  const opts = { url: `${t.base}/v1/traces`, headers: t.headers, compression: compression(t) };
  return encoding === 'protobuf' ? new ProtoTraceExporter(opts) : new JsonTraceExporter(opts);
}

/** Makes spans with the SDK (a tree: root, a GenAI child, a grandchild), returns them and the trace id. */
export function makeTrace(opts: { model?: string; error?: boolean } = {}): { spans: ReadableSpan[]; traceId: string; ids: Record<string, string> } {
  const collect = new Collect();
  const provider = new BasicTracerProvider({ resource, spanProcessors: [collect] });
  const tracer = provider.getTracer('gateway', '1.0.0');
  const root = tracer.startSpan('POST /chat', { kind: 1, attributes: { 'http.request.method': 'POST' } });
  const inRoot = trace.setSpan(context.active(), root);
  const llm = tracer.startSpan(`chat ${opts.model ?? 'gpt-4o'}`, {
    kind: 2,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': opts.model ?? 'gpt-4o',
      'gen_ai.response.model': `${opts.model ?? 'gpt-4o'}-2024-08-06`,
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.response.finish_reasons': ['stop'],
    },
  }, inRoot);
  if (opts.error) {
    llm.setAttribute('error.type', 'timeout');
    llm.setStatus({ code: 2, message: 'upstream timed out' });
  }
  const tool = tracer.startSpan('lookup_order', { attributes: { 'tool.name': 'orders' } }, trace.setSpan(inRoot, llm));
  tool.end();
  llm.end();
  root.end();
  const id = (s: Span) => s.spanContext().spanId;
  return { spans: collect.spans, traceId: root.spanContext().traceId, ids: { root: id(root), llm: id(llm), tool: id(tool) } };
}

export async function exportSpans(t: Target, encoding: Encoding, spans: ReadableSpan[]): Promise<ExportResult> {
  const exporter = traceExporter(t, encoding);
  try {
    return await exported((done) => exporter.export(spans, done));
  } finally {
    await exporter.shutdown();
  }
}

/** Records the GenAI client metrics with the SDK and exports them with the protobuf exporter. */
export async function exportGenAiMetrics(t: Target, model: string): Promise<ExportResult> {
  const exporter = new ProtoMetricExporter({ url: `${t.base}/v1/metrics`, headers: t.headers, compression: compression(t) });
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ resource, readers: [reader] });
  const meter = provider.getMeter('genai');
  const tokens = meter.createHistogram('gen_ai.client.token.usage', { unit: '{token}' });
  const duration = meter.createHistogram('gen_ai.client.operation.duration', { unit: 's' });
  const requests = meter.createCounter('http.server.requests');
  const common = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': model };
  tokens.record(120, { ...common, 'gen_ai.token.type': 'input' });
  tokens.record(80, { ...common, 'gen_ai.token.type': 'input' });
  tokens.record(30, { ...common, 'gen_ai.token.type': 'output' });
  duration.record(1.25, common);
  requests.add(3);
  const { resourceMetrics } = await reader.collect();
  try {
    return await exported((done) => exporter.export(resourceMetrics, done));
  } finally {
    await provider.shutdown().catch(() => undefined);
  }
}

/** Keeps emitted log records, to hand them to an exporter and read its result. */
class CollectLogs implements LogRecordProcessor {
  records: SdkLogRecord[] = [];
  onEmit(record: SdkLogRecord): void {
    this.records.push(record);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Emits log records inside a span of `spans` (so they carry its trace) and exports them. */
export async function exportLogs(t: Target, encoding: Encoding, inSpan: ReadableSpan, messages: string[]): Promise<ExportResult> {
  const collect = new CollectLogs();
  const provider = new LoggerProvider({ resource, processors: [collect] });
  const logger = provider.getLogger('gateway');
  const ctx = trace.setSpanContext(context.active(), inSpan.spanContext());
  for (const body of messages) logger.emit({ body, severityNumber: SeverityNumber.WARN, severityText: 'WARN', attributes: { 'retry.count': 2 }, context: ctx });
  const opts = { url: `${t.base}/v1/logs`, headers: t.headers, compression: compression(t) };
  const exporter = encoding === 'protobuf' ? new ProtoLogExporter(opts) : new JsonLogExporter(opts);
  try {
    return await exported((done) => exporter.export(collect.records, done));
  } finally {
    await exporter.shutdown();
  }
}

export const SUCCESS = ExportResultCode.SUCCESS;
