import { isPostgres, nowIso, type Db, type Migration } from '../db';
import { READ_COLUMNS, ROW_COLUMNS, type EventRow, type EventType } from './events';
import { decodeCursor, encodeCursor } from '../actions';

export const telemetryMigrations: Migration[] = [
  {
    name: '003_telemetry_events',
    async up(db) {
      await db.schema.createTable('telemetry_events', (t) => {
        t.string('tenant_id', 64).notNullable();
        t.string('id', 64).notNullable();
        t.string('type', 16).notNullable();
        t.string('trace_id', 32).notNullable();
        t.string('span_id', 16).notNullable();
        t.string('parent_span_id', 16);
        t.string('ts', 32).notNullable();
        t.double('duration_ms');
        t.string('status', 8).notNullable();
        t.string('name', 128).notNullable();
        t.string('model', 128);
        t.string('provider', 128);
        t.string('kernel', 64);
        t.string('result', 64);
        t.double('value');
        t.bigInteger('input_tokens');
        t.bigInteger('output_tokens');
        t.double('cost_usd');
        t.text('data').notNullable();
        // The dedupe key: one event per id and tenant, however often it is sent.
        t.primary(['tenant_id', 'id']);
        t.index(['tenant_id', 'ts'], 'telemetry_events_tenant_ts');
        // Covers the aggregate queries (a window of one kind): they never touch the table rows.
        t.index(
          ['tenant_id', 'type', 'ts', 'model', 'name', 'provider', 'kernel', 'status', 'result', 'duration_ms', 'value', 'input_tokens', 'output_tokens', 'cost_usd'],
          'telemetry_events_tenant_type_ts',
        );
        t.index(['tenant_id', 'trace_id'], 'telemetry_events_tenant_trace');
      });
      await db.schema.createTable('telemetry_ingest_stats', (t) => {
        t.string('tenant_id', 64).notNullable();
        t.string('type', 16).notNullable();
        t.bigInteger('accepted').notNullable().defaultTo(0);
        t.bigInteger('duplicates').notNullable().defaultTo(0);
        t.bigInteger('rejected').notNullable().defaultTo(0);
        t.bigInteger('batches').notNullable().defaultTo(0);
        t.string('last_ingest_at', 32).notNullable();
        t.primary(['tenant_id', 'type']);
      });
    },
  },
];

/** Rows per statement (a batch of up to telemetry.maxBatch takes one or a few). */
const CHUNK = 1000;
const COLS = ROW_COLUMNS.join(', ');
// `WHERE true` keeps SQLite from reading ON CONFLICT as a join constraint.
const SQLITE_INSERT = `INSERT INTO telemetry_events (${COLS}) SELECT ${ROW_COLUMNS.map((_, i) => `value ->> ${i}`).join(', ')} FROM json_each(?) WHERE true`;
const PG_INSERT = `INSERT INTO telemetry_events (${COLS}) SELECT ${COLS} FROM json_populate_recordset(NULL::telemetry_events, ?::json)`;

export interface EventFilter {
  tenantId: string;
  type?: EventType;
  since?: string;
  until?: string;
  trace_id?: string;
  model?: string;
  kernel?: string;
  status?: 'ok' | 'error';
  limit: number;
  cursor?: string;
}

export interface IngestStats {
  type: string;
  accepted: number;
  duplicates: number;
  rejected: number;
  batches: number;
  last_ingest_at: string;
}

/** The telemetry store: one table of events for every kind, plus per-tenant ingest counts. */
export class EventStore {
  constructor(readonly db: Db) {}

  /**
   * Stores the rows in one transaction, skipping ids already stored, and counts the batch;
   * resolves only after the commit. Returns the ids actually inserted. The rows travel as
   * one JSON parameter that the database unpacks itself (json_each on SQLite,
   * json_populate_recordset on PostgreSQL): thousands of bound values cost far more.
   */
  async insert(type: EventType, tenantId: string, rows: EventRow[], duplicatesInBatch: number, rejected: number): Promise<Set<string>> {
    const inserted = new Set<string>();
    const pg = isPostgres(this.db);
    await this.db.transaction(async (trx) => {
      for (let i = 0; i < rows.length; i += CHUNK) {
        const chunk = rows.slice(i, i + CHUNK);
        const res = pg
          ? await trx.raw(`${PG_INSERT} ON CONFLICT (tenant_id, id) DO NOTHING RETURNING id`, [JSON.stringify(chunk)])
          : await trx.raw(`${SQLITE_INSERT} ON CONFLICT (tenant_id, id) DO NOTHING RETURNING id`, [JSON.stringify(chunk.map((r) => ROW_COLUMNS.map((c) => r[c])))]);
        const out: Array<{ id: string }> = pg ? res.rows : res;
        for (const o of out) inserted.add(o.id);
      }
      const accepted = inserted.size;
      const duplicates = rows.length - accepted + duplicatesInBatch;
      await trx.raw(
        `INSERT INTO telemetry_ingest_stats (tenant_id, type, accepted, duplicates, rejected, batches, last_ingest_at) VALUES (?, ?, ?, ?, ?, 1, ?)
         ON CONFLICT (tenant_id, type) DO UPDATE SET accepted = telemetry_ingest_stats.accepted + excluded.accepted,
           duplicates = telemetry_ingest_stats.duplicates + excluded.duplicates, rejected = telemetry_ingest_stats.rejected + excluded.rejected,
           batches = telemetry_ingest_stats.batches + 1, last_ingest_at = excluded.last_ingest_at`,
        [tenantId, type, accepted, duplicates, rejected, nowIso()],
      );
    });
    return inserted;
  }

  /** Newest first, one tenant; the cursor continues after the last event of the previous page. */
  async list(f: EventFilter): Promise<{ rows: Array<Record<(typeof READ_COLUMNS)[number], unknown> & { ts: string; id: string }>; next_cursor: string | null }> {
    const q = this.db('telemetry_events')
      .select(...READ_COLUMNS)
      .where('tenant_id', f.tenantId)
      .orderBy([{ column: 'ts', order: 'desc' }, { column: 'id', order: 'desc' }]);
    if (f.type) q.where('type', f.type);
    if (f.since) q.where('ts', '>=', f.since);
    if (f.until) q.where('ts', '<', f.until);
    if (f.trace_id) q.where('trace_id', f.trace_id);
    if (f.model) q.where('model', f.model);
    if (f.kernel) q.where('kernel', f.kernel);
    if (f.status) q.where('status', f.status);
    if (f.cursor) {
      const [ts, id] = decodeCursor(f.cursor);
      q.where((w) => w.where('ts', '<', ts).orWhere((x) => x.where('ts', ts).andWhere('id', '<', id)));
    }
    const rows = await q.limit(f.limit + 1);
    const page = rows.slice(0, f.limit);
    const last = page[page.length - 1];
    return { rows: page, next_cursor: rows.length > f.limit && last ? encodeCursor(last.ts, last.id) : null };
  }

  /** Every span of one trace of one tenant, oldest first (bounded). */
  async trace(tenantId: string, traceId: string, max: number) {
    return this.db('telemetry_events')
      .select(...READ_COLUMNS)
      .where({ tenant_id: tenantId, trace_id: traceId })
      .orderBy([{ column: 'ts', order: 'asc' }, { column: 'id', order: 'asc' }])
      .limit(max + 1);
  }

  /** Ingest counts per type for one tenant, or for every tenant (null). */
  async stats(tenantId: string | null): Promise<IngestStats[]> {
    const q = this.db('telemetry_ingest_stats')
      .select('type')
      .sum({ accepted: 'accepted', duplicates: 'duplicates', rejected: 'rejected', batches: 'batches' })
      .max({ last_ingest_at: 'last_ingest_at' })
      .groupBy('type')
      .orderBy('type');
    if (tenantId) q.where('tenant_id', tenantId);
    const rows = await q;
    return rows.map((r: Record<string, unknown>) => ({
      type: String(r.type),
      accepted: Number(r.accepted),
      duplicates: Number(r.duplicates),
      rejected: Number(r.rejected),
      batches: Number(r.batches),
      last_ingest_at: String(r.last_ingest_at),
    }));
  }

  /** Stored events per type for one tenant. */
  async storedCounts(tenantId: string): Promise<Record<string, number>> {
    const rows = await this.db('telemetry_events').select('type').count({ n: '*' }).where('tenant_id', tenantId).groupBy('type');
    return Object.fromEntries(rows.map((r: Record<string, unknown>) => [String(r.type), Number(r.n)]));
  }

  /** Bytes on disk of the events table and its indexes (null when the database cannot say). */
  async tableBytes(): Promise<number | null> {
    try {
      if (isPostgres(this.db)) {
        const r = await this.db.raw("SELECT pg_total_relation_size(to_regclass('telemetry_events')) AS n");
        return Number(r.rows[0].n);
      }
      const r = await this.db.raw(
        "SELECT SUM(pgsize) AS n FROM dbstat WHERE name = 'telemetry_events' OR name LIKE 'telemetry_events_%' OR name LIKE 'sqlite_autoindex_telemetry_events%'",
      );
      return Number(r[0]?.n ?? 0);
    } catch {
      return null;
    }
  }
}
