// OTLP metrics: the GenAI series (gen_ai.client.token.usage, gen_ai.client.operation.duration
// and any other gen_ai.* series) are stored point by point; every series, stored or not, is
// counted by name.
import crypto from 'node:crypto';
import { attrsOf, type Attrs } from './attrs';
import { num, type HistogramPoint, type Metric, type MetricsRequest, type NumberPoint, type U64 } from './proto';

export const isStoredSeries = (name: string) => name.startsWith('gen_ai.');

export interface PointRow {
  id: string;
  name: string;
  ts: string;
  start_ts: string | null;
  kind: string;
  unit: string | null;
  service: string | null;
  value: number | null;
  count: number | null;
  min: number | null;
  max: number | null;
  data: string;
}

export interface SeriesCount {
  name: string;
  kind: string;
  unit: string | null;
  stored: boolean;
  points: number;
}

export interface MappedMetrics {
  points: PointRow[];
  series: Map<string, SeriesCount>;
  total: number;
  rejected: number;
  reasons: string[];
}

const TEMPORALITY = ['unspecified', 'delta', 'cumulative'];
const iso = (ns: U64) => {
  const n = num(ns);
  return n ? new Date(Math.floor(n / 1e6)).toISOString() : null;
};
const cut = (s: string, max: number) => (s.length > max ? s.slice(0, max) : s);

function kindOf(m: Metric): { kind: string; points: unknown[] } {
  if (m.gauge) return { kind: 'gauge', points: m.gauge.dataPoints ?? [] };
  if (m.sum) return { kind: 'sum', points: m.sum.dataPoints ?? [] };
  if (m.histogram) return { kind: 'histogram', points: m.histogram.dataPoints ?? [] };
  if (m.exponentialHistogram) return { kind: 'exponential_histogram', points: m.exponentialHistogram.dataPoints ?? [] };
  if (m.summary) return { kind: 'summary', points: m.summary.dataPoints ?? [] };
  return { kind: 'empty', points: [] };
}

/** Maps an export request: the points to store, and a count of every series' points. */
export function mapMetrics(req: MetricsRequest): MappedMetrics {
  const out: MappedMetrics = { points: [], series: new Map(), total: 0, rejected: 0, reasons: [] };
  for (const rm of req.resourceMetrics ?? []) {
    const resource = attrsOf(rm.resource?.attributes);
    const service = typeof resource['service.name'] === 'string' ? cut(resource['service.name'], 128) : null;
    for (const sm of rm.scopeMetrics ?? []) {
      for (const m of sm.metrics ?? []) {
        const name = cut(m.name ?? '', 255);
        const { kind, points } = kindOf(m);
        out.total += points.length;
        if (!name) {
          out.rejected += points.length;
          if (points.length) out.reasons.push('a metric without a name');
          continue;
        }
        const stored = isStoredSeries(name);
        const unit = m.unit ? cut(m.unit, 64) : null;
        const s = out.series.get(name) ?? { name, kind, unit, stored, points: 0 };
        out.series.set(name, s);
        s.points += points.length;
        if (!stored) continue;
        const meta = { resource, scope: sm.scope?.name ?? null, temporality: TEMPORALITY[m.sum?.aggregationTemporality ?? m.histogram?.aggregationTemporality ?? 0] ?? 'unspecified' };
        for (const p of points) {
          const row = pointRow(name, kind, unit, service, meta, p as NumberPoint & HistogramPoint);
          if (typeof row === 'string') {
            out.rejected++;
            out.reasons.push(row);
          } else out.points.push(row);
        }
      }
    }
  }
  return out;
}

function pointRow(name: string, kind: string, unit: string | null, service: string | null, meta: { resource: Attrs; scope: string | null; temporality: string }, p: NumberPoint & HistogramPoint): PointRow | string {
  const ts = iso(p.timeUnixNano);
  if (!ts) return `${name}: a point without time_unix_nano`;
  const attributes = attrsOf(p.attributes);
  const startTs = iso(p.startTimeUnixNano);
  let value: number | null = null;
  let count: number | null = null;
  const data: Record<string, unknown> = { attributes, ...meta };
  if (kind === 'gauge' || kind === 'sum') {
    value = p.asDouble ?? (p.asInt != null ? num(p.asInt) : null);
  } else {
    count = num(p.count);
    value = p.sum ?? null;
    if (kind === 'histogram') {
      data.explicit_bounds = p.explicitBounds ?? [];
      data.bucket_counts = (p.bucketCounts ?? []).map(num);
    }
  }
  if (value !== null && !Number.isFinite(value)) value = null;
  // The point's identity (not its value): the same point sent again hashes the same.
  const id = crypto.createHash('sha256').update(JSON.stringify([name, kind, meta.resource, meta.scope, attributes, startTs, num(p.timeUnixNano)])).digest('hex').slice(0, 32);
  return {
    id, name, ts, start_ts: startTs, kind, unit, service, value, count,
    min: typeof p.min === 'number' && Number.isFinite(p.min) ? p.min : null,
    max: typeof p.max === 'number' && Number.isFinite(p.max) ? p.max : null,
    data: JSON.stringify(data),
  };
}
