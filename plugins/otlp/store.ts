// Writes and reads of the receiver's own tables. Each export request is one transaction,
// answered only after it commits; a point or record already stored is counted as a duplicate.
import { nowIso, type Db } from '../../core/db';
import { afterCursor, encodeCursor } from '../../core/pagination';
import type { LogRow } from './logs';
import type { PointRow, SeriesCount } from './metrics';

// Rows per statement: well under SQLite's bound parameters (13 columns a row).
const CHUNK = 500;

/** Inserts the rows whose id is not stored yet for the tenant; returns how many were new. */
async function insertNew(trx: Db, table: string, tenantId: string, rows: Array<{ id: string }>): Promise<number> {
  let fresh = 0;
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    const known = new Set((await trx(table).where('tenant_id', tenantId).whereIn('id', chunk.map((r) => r.id)).select('id')).map((r: { id: string }) => r.id));
    const seen = new Set<string>();
    const add = chunk.filter((r) => !known.has(r.id) && !seen.has(r.id) && seen.add(r.id));
    if (add.length) await trx(table).insert(add.map((r) => ({ tenant_id: tenantId, ...r }))).onConflict(['tenant_id', 'id']).ignore();
    fresh += add.length;
  }
  return fresh;
}

/** Stores GenAI points and counts every series, in one transaction. */
export async function storeMetrics(db: Db, tenantId: string, points: PointRow[], series: Iterable<SeriesCount>): Promise<{ stored: number; duplicates: number }> {
  return db.transaction(async (trx) => {
    const stored = await insertNew(trx, 'otlp_metric_points', tenantId, points);
    const now = nowIso();
    for (const s of series) {
      await trx('otlp_metric_series')
        .insert({ tenant_id: tenantId, name: s.name, kind: s.kind, unit: s.unit, stored: s.stored, points: s.points, first_seen_at: now, last_seen_at: now })
        .onConflict(['tenant_id', 'name'])
        .merge({ points: trx.raw('otlp_metric_series.points + ?', [s.points]), kind: s.kind, unit: s.unit, last_seen_at: now });
    }
    return { stored, duplicates: points.length - stored };
  });
}

export async function storeLogs(db: Db, tenantId: string, rows: LogRow[]): Promise<{ stored: number; duplicates: number }> {
  return db.transaction(async (trx) => {
    const stored = await insertNew(trx, 'otlp_log_records', tenantId, rows);
    return { stored, duplicates: rows.length - stored };
  });
}

const parse = (s: unknown) => JSON.parse(String(s)) as Record<string, unknown>;
const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export interface PointFilter {
  name?: string;
  since?: string;
  until?: string;
  limit: number;
  cursor?: string;
}

/** Stored points of one tenant, newest first. */
export async function listPoints(db: Db, tenantId: string, f: PointFilter) {
  const q = db('otlp_metric_points').where('tenant_id', tenantId);
  if (f.name) q.where('name', f.name);
  if (f.since) q.where('ts', '>=', f.since);
  if (f.until) q.where('ts', '<', f.until);
  afterCursor(q, f.cursor, 'ts');
  const rows = await q.orderBy([{ column: 'ts', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(f.limit + 1);
  const page = rows.slice(0, f.limit);
  const last = page[page.length - 1];
  return {
    points: page.map((r: Record<string, unknown>) => {
      const d = parse(r.data);
      return {
        id: String(r.id), name: String(r.name), timestamp: String(r.ts), start_timestamp: (r.start_ts as string | null) ?? null, kind: String(r.kind),
        unit: (r.unit as string | null) ?? null, service: (r.service as string | null) ?? null, value: numOrNull(r.value), count: numOrNull(r.count),
        min: numOrNull(r.min), max: numOrNull(r.max), attributes: d.attributes as Record<string, unknown>, resource: d.resource as Record<string, unknown>,
        temporality: String(d.temporality), explicit_bounds: (d.explicit_bounds as number[] | undefined) ?? null, bucket_counts: (d.bucket_counts as number[] | undefined) ?? null,
      };
    }),
    next_cursor: rows.length > f.limit && last ? encodeCursor(String(last.ts), String(last.id)) : null,
  };
}

export async function listSeries(db: Db, tenantId: string) {
  const rows = await db('otlp_metric_series').where('tenant_id', tenantId).orderBy('name');
  return rows.map((r: Record<string, unknown>) => ({
    name: String(r.name), kind: String(r.kind), unit: (r.unit as string | null) ?? null, stored: Boolean(r.stored), points: Number(r.points),
    first_seen_at: String(r.first_seen_at), last_seen_at: String(r.last_seen_at),
  }));
}

export interface LogFilter {
  trace_id?: string;
  since?: string;
  until?: string;
  limit: number;
  cursor?: string;
}

/** Stored log records of one tenant, newest first (oldest first within one trace). */
export async function listLogs(db: Db, tenantId: string, f: LogFilter) {
  const order = f.trace_id ? 'asc' : 'desc';
  const q = db('otlp_log_records').where('tenant_id', tenantId);
  if (f.trace_id) q.where('trace_id', f.trace_id);
  if (f.since) q.where('ts', '>=', f.since);
  if (f.until) q.where('ts', '<', f.until);
  afterCursor(q, f.cursor, 'ts', order);
  const rows = await q.orderBy([{ column: 'ts', order }, { column: 'id', order }]).limit(f.limit + 1);
  const page = rows.slice(0, f.limit);
  const last = page[page.length - 1];
  return {
    records: page.map((r: Record<string, unknown>) => {
      const d = parse(r.data);
      return {
        id: String(r.id), timestamp: String(r.ts), trace_id: (r.trace_id as string | null) ?? null, span_id: (r.span_id as string | null) ?? null,
        severity_number: numOrNull(r.severity_number), severity_text: (r.severity_text as string | null) ?? null, event_name: (r.event_name as string | null) ?? null,
        service: (r.service as string | null) ?? null, body: (r.body as string | null) ?? null,
        attributes: d.attributes as Record<string, unknown>, resource: d.resource as Record<string, unknown>, scope: (d.scope as string | null) ?? null,
      };
    }),
    next_cursor: rows.length > f.limit && last ? encodeCursor(String(last.ts), String(last.id)) : null,
  };
}
