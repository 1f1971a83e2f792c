import type { Config } from '../config';
import type { Pipeline } from '../http/pipeline';
import { KernelMetrics } from './kernel';
import { httpObserver, Telemetry } from './service';
import { CacheGauges } from './caches';

export { Telemetry } from './service';
export { KernelMetrics, type KernelSnapshot } from './kernel';

/**
 * `services.telemetry`: the host's own telemetry (the OpenTelemetry SDK, its kernel metrics,
 * the gauges of its caches). The store of ingested events is plugin observability's
 * (core/contracts/telemetry.ts).
 */
export interface TelemetryService {
  sdk: Telemetry;
  kernels: KernelMetrics;
  /** Gauges of the host's bounded in-memory caches. */
  caches: CacheGauges;
}

/** Creates the telemetry service and hooks the HTTP metrics onto the pipeline. */
export function createTelemetry(config: Config, pipeline: Pipeline, version: string): TelemetryService {
  const sdk = new Telemetry(config, version);
  if (config.telemetry.httpMetrics) pipeline.observers.push(httpObserver(sdk));
  const caches = new CacheGauges(sdk);
  caches.track({ name: 'telemetry.histogram_series', entries: () => sdk.keyedHistograms.seriesCount, limit: null });
  return { caches, sdk, kernels: new KernelMetrics(sdk) };
}
