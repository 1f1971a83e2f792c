import type { Knex } from 'knex';
import { isPostgres, nowIso, type Db, type Migration } from '../../../core/db';
import type { EventType, HourlyEvents, IngestStats, Window } from '../../../core/contracts/telemetry';
import { READ_COLUMNS, ROW_COLUMNS, type EventRow } from './events';
import { afterCursor, encodeCursor } from '../../../core/pagination';
import { Slices } from './slices';
import { SqliteWriter, sqlRows } from './sqlite-writer';
import { migrateSqliteHotAppend, migrateSqliteTraceIndex, traceRowsClause, TRACE_KEY_SQL } from './trace-index';

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
  {
    // On SQLite the trace index takes random trace ids, so every commit rewrites pages all
    // over it; keyed on 8 hex characters of the id (entries half as big) a commit rewrites
    // half as many pages. Lookups check the full id on the row. (005 replaces it.)
    name: '004_telemetry_trace_key',
    async up(db) {
      if (isPostgres(db)) return;
      await db.raw('DROP INDEX IF EXISTS telemetry_events_tenant_trace');
      await db.raw(`CREATE INDEX telemetry_events_trace_key ON telemetry_events (tenant_id, ${TRACE_KEY_SQL})`);
    },
  },
  {
    name: '005_telemetry_trace_hot_cold',
    async up(db) {
      if (!isPostgres(db)) await migrateSqliteTraceIndex(db);
    },
  },
  {
    name: '006_telemetry_trace_hot_append',
    async up(db) {
      if (!isPostgres(db)) await migrateSqliteHotAppend(db);
    },
  },
];

/** Rows per statement on PostgreSQL (a batch of up to telemetry.maxBatch takes one or a few). */
const CHUNK = 5000;
/** Rows one SQLite group commit takes at most: a bound on the latency a queued batch adds. */
const GROUP_ROWS = 5000;
const COLS = ROW_COLUMNS.join(', ');
// json_populate_recordset turns the `data` object into its text for the text column.
const PG_INSERT =
  `INSERT INTO telemetry_events (${COLS}) SELECT ${COLS} FROM json_populate_recordset(NULL::telemetry_events, ?::json)` +
  ' ON CONFLICT (tenant_id, id) DO NOTHING RETURNING tenant_id, id';
const STATS_UPSERT = (n: number) =>
  `INSERT INTO telemetry_ingest_stats (tenant_id, type, accepted, duplicates, rejected, batches, last_ingest_at) VALUES ${Array(n).fill('(?, ?, ?, ?, ?, ?, ?)').join(', ')}
   ON CONFLICT (tenant_id, type) DO UPDATE SET accepted = telemetry_ingest_stats.accepted + excluded.accepted,
     duplicates = telemetry_ingest_stats.duplicates + excluded.duplicates, rejected = telemetry_ingest_stats.rejected + excluded.rejected,
     batches = telemetry_ingest_stats.batches + excluded.batches, last_ingest_at = excluded.last_ingest_at`;

/**
 * One row as JSON with `data` (already JSON text) spliced in as it is: escaping it into a
 * string and unescaping it again costs more than the insert. SQLite reads an array in
 * ROW_COLUMNS order; json_populate_recordset reads objects by column name.
 */
function rowJson(r: EventRow, pg: boolean): string {
  const head = pg
    ? JSON.stringify({
      tenant_id: r.tenant_id, id: r.id, type: r.type, trace_id: r.trace_id, span_id: r.span_id, parent_span_id: r.parent_span_id, ts: r.ts,
      duration_ms: r.duration_ms, status: r.status, name: r.name, model: r.model, provider: r.provider, kernel: r.kernel, result: r.result,
      value: r.value, input_tokens: r.input_tokens, output_tokens: r.output_tokens, cost_usd: r.cost_usd,
    })
    : JSON.stringify([
      r.tenant_id, r.id, r.type, r.trace_id, r.span_id, r.parent_span_id, r.ts, r.duration_ms, r.status, r.name, r.model,
      r.provider, r.kernel, r.result, r.value, r.input_tokens, r.output_tokens, r.cost_usd,
    ]);
  return pg ? `${head.slice(0, -1)},"data":${r.data}}` : `${head.slice(0, -1)},${r.data}]`;
}

/** A batch waiting for its group commit. */
interface Pending {
  type: EventType;
  tenantId: string;
  rows: EventRow[];
  /** The rows as JSON array elements (built while the batch waits, not while it holds the connection). */
  json: string[];
  /** SQLite: the rows joined and escaped for the commit script (see sqlRows). */
  text: string;
  /** Ids the client gave (the only ones that can already be stored). */
  given: string[];
  duplicatesInBatch: number;
  rejected: number;
  resolve: (inserted: Set<string>) => void;
  reject: (err: unknown) => void;
}

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

/** The telemetry store: one table of events for every kind, plus per-tenant ingest counts. */
export class EventStore {
  private readonly pg: boolean;

  /** `traceMergeAt`: hot trace-index entries that trigger a merge on SQLite (see trace-index.ts). */
  constructor(readonly db: Db, opts: { traceMergeAt: number }) {
    this.pg = isPostgres(db);
    this.sqlite = this.pg ? null : new SqliteWriter(db, opts.traceMergeAt);
  }

  private readonly queue: Pending[] = [];
  private readonly sqlite: SqliteWriter | null;
  private draining = false;

  /**
   * Stores the rows in one transaction, skipping ids already stored, and counts the batch;
   * resolves only after the commit. Returns the ids actually inserted. `given`: the ids the
   * client gave (the others were generated, so cannot be stored already). The rows travel as
   * one JSON value that the database unpacks itself (jsonb_each on SQLite,
   * json_populate_recordset on PostgreSQL): thousands of bound values cost far more.
   *
   * Batches that arrive while a commit is under way are stored together in the next one (a
   * group commit): SQLite has one writer, and a commit costs about as much for many batches
   * as for one. Each batch is still answered only after the commit that holds it.
   */
  async insert(type: EventType, tenantId: string, rows: EventRow[], duplicatesInBatch: number, rejected: number, given: string[]): Promise<Set<string>> {
    const json: string[] = new Array(rows.length);
    const slices = new Slices();
    for (let i = 0; i < rows.length; i++) {
      if ((i & 31) === 31 && slices.due()) await slices.pause();
      json[i] = rowJson(rows[i], this.pg);
    }
    const text = this.pg ? '' : sqlRows(json);
    return new Promise((resolve, reject) => {
      this.queue.push({ type, tenantId, rows, json, text, given, duplicatesInBatch, rejected, resolve, reject });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length) {
        // PostgreSQL takes concurrent writers: there every batch keeps its own transaction.
        let take = 1;
        if (!this.pg) {
          for (let rows = this.queue[0].rows.length; take < this.queue.length && rows + this.queue[take].rows.length <= GROUP_ROWS; take++) {
            rows += this.queue[take].rows.length;
          }
        }
        const group = this.queue.splice(0, take);
        if (this.pg) {
          // Not awaited: the next batch starts on another pooled connection.
          this.commit(group).catch((err) => group[0].reject(err));
          continue;
        }
        try {
          await this.commit(group);
        } catch (err) {
          // One failed batch must not fail the others it was grouped with: each alone again.
          if (group.length === 1) group[0].reject(err);
          else for (const p of group) await this.commit([p]).catch((e) => p.reject(e));
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** Stores a group of batches in one transaction and answers each with its own inserted ids. */
  private async commit(group: Pending[]): Promise<void> {
    const inserted = this.sqlite
      ? await this.sqlite.write(group.map((p) => ({ ...p, ids: p.rows.map((r) => r.id) })))
      : await this.commitPg(group);
    // Answered on the next turn of the event loop: the drain loop first hands the next group
    // to the database, so that the callers' own work (recording, answering) runs alongside it.
    setImmediate(() => group.forEach((p, g) => p.resolve(inserted[g])));
  }

  /** PostgreSQL: one transaction, the inserted ids from RETURNING. */
  private async commitPg(group: Pending[]): Promise<Array<Set<string>>> {
    // A key repeated across batches of the group belongs to the first that sent it (the
    // others count it as a duplicate, as they would one commit later).
    const owner = new Map<string, number>();
    const chunks: string[] = [];
    let parts: string[] = [];
    group.forEach((p, g) => {
      for (let i = 0; i < p.rows.length; i++) {
        const key = `${p.tenantId}\u0000${p.rows[i].id}`;
        if (!owner.has(key)) owner.set(key, g);
        parts.push(p.json[i]);
        if (parts.length === CHUNK) {
          chunks.push(`[${parts.join(',')}]`);
          parts = [];
        }
      }
    });
    if (parts.length) chunks.push(`[${parts.join(',')}]`);
    const inserted = group.map(() => new Set<string>());
    // Counts per tenant and kind, one stats row each.
    const stats = new Map<string, { tenantId: string; type: EventType; accepted: number; duplicates: number; rejected: number; batches: number }>();
    await this.db.transaction(async (trx) => {
      for (const chunk of chunks) {
        const res = await trx.raw(PG_INSERT, [chunk]);
        const rows = res.rows as Array<{ tenant_id: string; id: string }>;
        for (const o of rows) inserted[owner.get(`${o.tenant_id}\u0000${o.id}`)!].add(o.id);
      }
      group.forEach((p, g) => {
        const key = `${p.tenantId}\u0000${p.type}`;
        let s = stats.get(key);
        if (!s) stats.set(key, (s = { tenantId: p.tenantId, type: p.type, accepted: 0, duplicates: 0, rejected: 0, batches: 0 }));
        s.accepted += inserted[g].size;
        s.duplicates += p.rows.length - inserted[g].size + p.duplicatesInBatch;
        s.rejected += p.rejected;
        s.batches++;
      });
      const now = nowIso();
      const binds = [...stats.values()].flatMap((s) => [s.tenantId, s.type, s.accepted, s.duplicates, s.rejected, s.batches, now]);
      await trx.raw(STATS_UPSERT(stats.size), binds);
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
    if (f.trace_id) this.whereTrace(q, f.trace_id);
    if (f.model) q.where('model', f.model);
    if (f.kernel) q.where('kernel', f.kernel);
    if (f.status) q.where('status', f.status);
    afterCursor(q, f.cursor, 'ts');
    const rows = await q.limit(f.limit + 1);
    const page = rows.slice(0, f.limit);
    const last = page[page.length - 1];
    return { rows: page, next_cursor: rows.length > f.limit && last ? encodeCursor(last.ts, last.id) : null };
  }

  /** Every span of one trace of one tenant, oldest first (bounded). */
  async trace(tenantId: string, traceId: string, max: number) {
    return this.whereTrace(this.db('telemetry_events').select(...READ_COLUMNS).where({ tenant_id: tenantId }), traceId)
      .orderBy([{ column: 'ts', order: 'asc' }, { column: 'id', order: 'asc' }])
      .limit(max + 1);
  }

  private whereTrace<Q extends Knex.QueryBuilder>(q: Q, traceId: string): Q {
    q.where('trace_id', traceId);
    if (!this.pg) q.whereRaw(...traceRowsClause(traceId));
    return q;
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

  /** Stored events per type in a window. */
  async countsByType(w: Window): Promise<Record<string, number>> {
    const rows = await this.db('telemetry_events').select('type').count({ n: '*' }).where('tenant_id', w.tenantId).andWhere('ts', '>=', w.since).andWhere('ts', '<', w.until).groupBy('type');
    return Object.fromEntries(rows.map((r: Record<string, unknown>) => [String(r.type), Number(r.n)]));
  }

  /** Stored events of a tenant since a time (and before `until`), of one kernel when given. */
  async count(f: { tenantId: string; since: string; until?: string; kernel?: string }): Promise<number> {
    const q = this.db('telemetry_events').where('tenant_id', f.tenantId).andWhere('ts', '>=', f.since);
    if (f.until !== undefined) q.andWhere('ts', '<', f.until);
    if (f.kernel !== undefined) q.where('kernel', f.kernel);
    const [{ n }] = await q.count({ n: '*' });
    return Number(n);
  }

  /** Stored events per tenant, hour, type and model: event count and LLM tokens. */
  async hourly(f: { from: string; to: string; tenantId?: string }): Promise<HourlyEvents[]> {
    const hour = 'substr(ts, 1, 13)';
    const q = this.db('telemetry_events')
      .where('ts', '>=', f.from)
      .andWhere('ts', '<', f.to)
      .select('tenant_id', 'type', 'model', this.db.raw(`${hour} as hour`))
      .count({ events: '*' })
      .sum({ tokens: this.db.raw("case when type = 'llm-call' then coalesce(input_tokens, 0) + coalesce(output_tokens, 0) else 0 end") })
      .groupByRaw(`tenant_id, type, model, ${hour}`);
    if (f.tenantId) q.where('tenant_id', f.tenantId);
    const rows = (await q) as Array<{ tenant_id: string; type: string; model: string | null; hour: string; events: number | string; tokens: number | string | null }>;
    return rows.map((r) => ({ tenant_id: r.tenant_id, type: r.type, model: r.model, hour: r.hour, events: Number(r.events), tokens: Number(r.tokens ?? 0) }));
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
        "SELECT SUM(pgsize) AS n FROM dbstat WHERE name = 'telemetry_events' OR name LIKE 'telemetry_events_%' OR name LIKE 'sqlite_autoindex_telemetry_events%' OR name LIKE 'telemetry_trace_%'",
      );
      return Number(r[0]?.n ?? 0);
    } catch {
      return null;
    }
  }
}
