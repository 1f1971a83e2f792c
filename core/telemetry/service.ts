import crypto from 'node:crypto';
import { type Meter, type Tracer } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader, type IMetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type IdGenerator, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { HostMetrics } from '@opentelemetry/host-metrics';
import { RuntimeNodeInstrumentation } from '@opentelemetry/instrumentation-runtime-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Config } from '../config';
import type { RequestRecord } from '../http/pipeline';
import { KeyedHistograms } from './histograms';

/** Bucket bounds (seconds) for request and operation durations. */
export const DURATION_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * Lets a span carry ids chosen by the caller (an ingested event's own trace and span ids):
 * `withIds` sets them for exactly one synchronous startSpan call; otherwise ids are random.
 */
class PresetIds implements IdGenerator {
  private traceId: string | null = null;
  private spanId: string | null = null;

  withIds<T>(traceId: string, spanId: string, fn: () => T): T {
    this.traceId = traceId;
    this.spanId = spanId;
    try {
      return fn();
    } finally {
      this.traceId = null;
      this.spanId = null;
    }
  }

  generateTraceId(): string {
    const id = this.traceId;
    this.traceId = null;
    return id ?? crypto.randomBytes(16).toString('hex');
  }

  generateSpanId(): string {
    const id = this.spanId;
    this.spanId = null;
    return id ?? crypto.randomBytes(8).toString('hex');
  }
}

/**
 * The OpenTelemetry SDK of the host: one MeterProvider (read by the Prometheus exporter that
 * `/metrics/` serves, and by an OTLP exporter when configured) and one TracerProvider.
 * Nothing is registered globally, so several hosts can live in one process (tests).
 */
export class Telemetry {
  readonly meterProvider: MeterProvider;
  readonly tracerProvider: BasicTracerProvider;
  /** The meter and tracer of the host; areas of the service create their instruments here. */
  readonly meter: Meter;
  readonly tracer: Tracer;
  readonly otlpEnabled: boolean;
  /** Histograms of ingested events (see histograms.ts), collected with the SDK's instruments. */
  readonly keyedHistograms: KeyedHistograms;
  private readonly prometheus: PrometheusExporter;
  private readonly serializer = new PrometheusSerializer('', false, undefined, false, true);
  private readonly ids = new PresetIds();
  private readonly runtime: RuntimeNodeInstrumentation | null = null;

  constructor(config: Config, version: string) {
    const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.telemetry.serviceName, [ATTR_SERVICE_VERSION]: version });
    // "Serve it ourselves": no second HTTP server; /metrics/ is a route of the host.
    this.keyedHistograms = new KeyedHistograms(resource, { name: 'platform-control', version });
    const metricProducers = [this.keyedHistograms];
    this.prometheus = new PrometheusExporter({ preventServerStart: true, metricProducers });
    const readers: IMetricReader[] = [this.prometheus];
    const spanProcessors: SpanProcessor[] = [];
    const endpoint = config.telemetry.otlp.endpoint?.replace(/\/+$/, '');
    this.otlpEnabled = Boolean(endpoint);
    if (endpoint) {
      readers.push(
        new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter({ url: `${endpoint}/v1/metrics` }),
          exportIntervalMillis: config.telemetry.otlp.exportIntervalMs,
          metricProducers,
        }),
      );
      spanProcessors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }), { maxQueueSize: 8192, maxExportBatchSize: 512 }));
    }
    this.meterProvider = new MeterProvider({ resource, readers });
    this.tracerProvider = new BasicTracerProvider({ resource, spanProcessors, idGenerator: this.ids });
    this.meter = this.meterProvider.getMeter('platform-control', version);
    this.tracer = this.tracerProvider.getTracer('platform-control', version);
    if (config.telemetry.runtimeMetrics) {
      // OpenTelemetry's own collectors (semantic conventions v8js.* / nodejs.* / process.*),
      // bound to this host's provider rather than the global one: tests run several hosts.
      this.runtime = new RuntimeNodeInstrumentation({ enabled: false, monitoringPrecision: config.telemetry.eventLoopPrecisionMs });
      this.runtime.setMeterProvider(this.meterProvider);
      this.runtime.enable();
      new HostMetrics({ meterProvider: this.meterProvider, name: 'platform-control' }).start();
    }
  }

  /** Runs `fn` (which starts exactly one span) so that the span gets the given ids. */
  withSpanIds<T>(traceId: string, spanId: string, fn: () => T): T {
    return this.ids.withIds(traceId, spanId, fn);
  }

  /** Current metrics, as collected by the Prometheus reader. */
  async collect(): Promise<ResourceMetrics> {
    const { resourceMetrics } = await this.prometheus.collect();
    return resourceMetrics;
  }

  /** The Prometheus text exposition of every instrument. */
  async prometheusText(): Promise<string> {
    return this.serializer.serialize(await this.collect());
  }

  /** Pushes pending spans and metrics to the OTLP collector (when one is configured). */
  async flush(): Promise<void> {
    await Promise.all([this.tracerProvider.forceFlush(), this.meterProvider.forceFlush()]);
  }

  async shutdown(): Promise<void> {
    this.runtime?.disable();
    await Promise.allSettled([this.tracerProvider.shutdown(), this.meterProvider.shutdown()]);
  }
}

/**
 * Records HTTP request count and latency by route and status, and rate-limit rejections,
 * from the pipeline's observers: one histogram record per request (its `_count` is the
 * request count), no auto-instrumentation, which costs far more. The histogram is a keyed
 * one (see histograms.ts): the SDK's Histogram.record hashes its attributes on every call.
 */
export function httpObserver(telemetry: Telemetry): (r: RequestRecord) => void {
  const duration = telemetry.keyedHistograms.create('http.server.request.duration', {
    description: 'Duration of HTTP server requests',
    unit: 's',
    boundaries: DURATION_BUCKETS_S,
  });
  const limited = telemetry.meter.createCounter('http.server.rate_limited', { description: 'Requests refused by the rate limiter (429)' });
  // Unmatched paths share one label value, so the series stay bounded by the routes.
  return (r) => {
    const route = r.route ?? 'unmatched';
    duration.record(`${r.method} ${route} ${r.status}`, () => ({ 'http.request.method': r.method, 'http.route': route, 'http.response.status_code': r.status }), r.durationMs / 1000);
    if (r.status === 429) limited.add(1, { 'http.route': route });
  };
}
