import type { Telemetry } from './service';

/** A bounded in-memory structure of the host, and how to read its size. */
export interface TrackedCache {
  name: string;
  entries: () => number;
  /** The most entries it keeps (null when bounded otherwise, e.g. by expiry). */
  limit: number | null;
}

/**
 * `platform.cache.entries` and `platform.cache.limit` by cache: every in-memory cache of the
 * host has a bound, and an operator can see how full each one is.
 */
export class CacheGauges {
  private readonly caches: TrackedCache[] = [];

  constructor(telemetry: Telemetry) {
    const entries = telemetry.meter.createObservableGauge('platform.cache.entries', { description: 'Entries held by an in-memory cache of the host' });
    const limit = telemetry.meter.createObservableGauge('platform.cache.limit', { description: 'Most entries an in-memory cache of the host keeps' });
    entries.addCallback((r) => {
      for (const c of this.caches) r.observe(c.entries(), { cache: c.name });
    });
    limit.addCallback((r) => {
      for (const c of this.caches) if (c.limit !== null) r.observe(c.limit, { cache: c.name });
    });
  }

  track(cache: TrackedCache): void {
    this.caches.push(cache);
  }
}
