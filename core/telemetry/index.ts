import type { Config } from '../config';
import type { Db } from '../db';
import type { Pipeline } from '../http/pipeline';
import { KernelMetrics } from './kernel';
import { httpObserver, Telemetry } from './service';
import { EventStore } from './store';
import { EventRecorder } from './record';
import { ingest, type IngestResult } from './ingest';
import type { EventType } from './events';
import { CacheGauges } from './caches';
import { ATTR_CACHE_MAX } from './record';

export { Telemetry } from './service';
export { KernelMetrics, type KernelSnapshot } from './kernel';
export { EventStore, telemetryMigrations } from './store';
export type { IngestResult } from './ingest';
export * from './events';

/** `services.telemetry`: the SDK, plus the host's kernel metrics. */
export interface TelemetryService {
  sdk: Telemetry;
  kernels: KernelMetrics;
  /** The store of ingested events (ingest, query and the operations console share it). */
  store: EventStore;
  /** Validates, stores (one transaction) and records one event or a batch. */
  ingest(type: EventType, tenantId: string, body: unknown): Promise<IngestResult>;
  /** Gauges of the host's bounded in-memory caches. */
  caches: CacheGauges;
}

/** Creates the telemetry service and hooks the HTTP metrics onto the pipeline. */
export function createTelemetry(config: Config, db: Db, pipeline: Pipeline, version: string): TelemetryService {
  const sdk = new Telemetry(config, version);
  if (config.telemetry.httpMetrics) pipeline.observers.push(httpObserver(sdk));
  const store = new EventStore(db, { traceMergeAt: config.telemetry.traceMergeAt });
  const recorder = new EventRecorder(sdk);
  const caches = new CacheGauges(sdk);
  caches.track({ name: 'telemetry.label_sets', entries: () => recorder.rememberedLabelSets, limit: ATTR_CACHE_MAX });
  caches.track({ name: 'telemetry.histogram_series', entries: () => sdk.keyedHistograms.seriesCount, limit: null });
  return {
    caches,
    sdk,
    kernels: new KernelMetrics(sdk),
    store,
    ingest: (type, tenantId, body) => ingest(store, recorder, config.telemetry.maxBatch, type, tenantId, body),
  };
}
export { scopeTenant, window } from './scope';
export { traceTree, traceSchema } from './trace';
export * from './views';
