import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  DataPointType,
  type CollectionResult,
  type DataPoint,
  type Histogram,
  type HistogramMetricData,
  type MetricProducer,
} from '@opentelemetry/sdk-metrics';

// Histograms of ingested events, handed to the SDK's readers as a MetricProducer.
//
// The SDK's own Histogram.record hashes its attributes object on every call (sorted keys,
// JSON.stringify): about a microsecond, three times per ingested LLM call, which was a fifth
// of the ingest's main-thread time at tens of thousands of events a second. Here a series is
// found by a key the caller already has, and a record is a bucket search and four additions.
// The readers (Prometheus for /metrics/, OTLP when configured) collect these series with the
// SDK's own, as cumulative histograms.

/** Now as the SDK's [seconds, nanoseconds]. */
function hrTime(): HrTime {
  const ms = performance.timeOrigin + performance.now();
  const s = Math.floor(ms / 1000);
  return [s, Math.round((ms - s * 1000) * 1e6)];
}

/** Series per instrument before new label sets go to one overflow series (the SDK's default). */
export const CARDINALITY_LIMIT = 2000;
const OVERFLOW: Attributes = { 'otel.metric.overflow': true };

/**
 * The series of `key` in `series`, made with `make(attributes)` the first time; past the
 * cardinality limit new keys share one series labelled `otel.metric.overflow`.
 */
export function seriesOf<T>(series: Map<string, T>, key: string, attributes: () => Attributes, make: (attributes: Attributes) => T): T {
  let s = series.get(key);
  if (s) return s;
  const overflow = series.size >= CARDINALITY_LIMIT;
  const k = overflow ? '\u0000overflow' : key;
  s = series.get(k);
  if (!s) series.set(k, (s = make(overflow ? OVERFLOW : attributes())));
  return s;
}

interface Series {
  attributes: Attributes;
  counts: number[];
  count: number;
  sum: number;
  min: number;
  max: number;
}

export class KeyedHistogram {
  private readonly series = new Map<string, Series>();

  get seriesCount(): number {
    return this.series.size;
  }
  private readonly start: HrTime = hrTime();

  constructor(
    readonly name: string,
    readonly description: string,
    readonly unit: string,
    private readonly boundaries: number[],
  ) {}

  /** Records a value in the series of `key`; `attributes` makes its label set the first time. */
  record(key: string, attributes: () => Attributes, value: number): void {
    const s = seriesOf(this.series, key, attributes, (a) => ({ attributes: a, counts: new Array(this.boundaries.length + 1).fill(0), count: 0, sum: 0, min: Infinity, max: -Infinity }));
    // Boundaries are inclusive upper bounds: the first one >= value takes it.
    const b = this.boundaries;
    let lo = 0;
    let hi = b.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (value <= b[mid]!) hi = mid;
      else lo = mid + 1;
    }
    s.counts[lo]!++;
    s.count++;
    s.sum += value;
    if (value < s.min) s.min = value;
    if (value > s.max) s.max = value;
  }

  data(end: HrTime): HistogramMetricData {
    const dataPoints: Array<DataPoint<Histogram>> = [];
    for (const s of this.series.values()) {
      dataPoints.push({
        attributes: s.attributes,
        startTime: this.start,
        endTime: end,
        value: { buckets: { boundaries: this.boundaries, counts: [...s.counts] }, count: s.count, sum: s.sum, min: s.min, max: s.max },
      });
    }
    return {
      descriptor: { name: this.name, description: this.description, unit: this.unit, valueType: ValueType.DOUBLE },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.HISTOGRAM,
      dataPoints,
    };
  }
}

/** The producer the readers collect the keyed histograms from. */
export class KeyedHistograms implements MetricProducer {
  private readonly list: KeyedHistogram[] = [];

  constructor(
    private readonly resource: Resource,
    private readonly scope: { name: string; version: string },
  ) {}

  create(name: string, opts: { description: string; unit?: string; boundaries: number[] }): KeyedHistogram {
    const h = new KeyedHistogram(name, opts.description, opts.unit ?? '', opts.boundaries);
    this.list.push(h);
    return h;
  }

  /** Series held by every keyed histogram. */
  get seriesCount(): number {
    return this.list.reduce((n, h) => n + h.seriesCount, 0);
  }

  /** The most series they can hold together. */
  get seriesLimit(): number {
    return this.list.length * (CARDINALITY_LIMIT + 1);
  }

  async collect(): Promise<CollectionResult> {
    const end = hrTime();
    const metrics = this.list.map((h) => h.data(end)).filter((m) => m.dataPoints.length > 0);
    return { resourceMetrics: { resource: this.resource, scopeMetrics: metrics.length ? [{ scope: this.scope, metrics }] : [] }, errors: [] };
  }
}
