import type { Knex } from 'knex';

// The trace index on SQLite, kept in two tables instead of one B-tree index.
//
// Trace ids are random, so a plain index on them takes each new row on a different page:
// a commit of 1,000 events rewrote about as many index pages (4 KiB each, written to the
// WAL and again at the checkpoint), which cost more than the rest of the insert together
// (measured: 30 µs a row with the index, 12 without, at 200k rows; 51 against 15 at 1M).
// Here a trigger appends each new row's key to a "hot" table (keyed by the row's `seq`, so
// entries go at its end: a keyed hot table cost a quarter of the insert); when it passes
// `telemetry.traceMergeAt` entries, the ingest commit moves them into the "cold" table in
// key order, so that each cold page is rewritten once for many entries. A lookup seeks the
// cold table's index and scans the hot table (about 50 ns an entry: 1-2 ms at the default
// 32,768). Entries reference the row by `seq`, the table's INTEGER PRIMARY KEY (stable,
// unlike an implicit rowid, under VACUUM).
//
// PostgreSQL keeps an ordinary index: it takes concurrent writers and is not the bottleneck.

/** The key: the last 8 hex characters (64-bit ids padded to 128 bits share their first ones). */
export const TRACE_KEY_SQL = 'substr(trace_id, -8)';
export const traceKey = (traceId: string): string => traceId.slice(-8);

const COLUMNS = `tenant_id varchar(64) NOT NULL, id varchar(64) NOT NULL, type varchar(16) NOT NULL,
  trace_id varchar(32) NOT NULL, span_id varchar(16) NOT NULL, parent_span_id varchar(16), ts varchar(32) NOT NULL,
  duration_ms float, status varchar(8) NOT NULL, name varchar(128) NOT NULL, model varchar(128), provider varchar(128),
  kernel varchar(64), result varchar(64), value float, input_tokens bigint, output_tokens bigint, cost_usd float, data text NOT NULL`;
const NAMES = 'tenant_id, id, type, trace_id, span_id, parent_span_id, ts, duration_ms, status, name, model, provider, kernel, result, value, input_tokens, output_tokens, cost_usd, data';

/**
 * SQLite migration: rebuilds telemetry_events with `seq INTEGER PRIMARY KEY` (the dedupe key
 * becomes a UNIQUE constraint), moves the trace index into the hot and cold tables and
 * installs the triggers that keep them.
 */
export async function migrateSqliteTraceIndex(db: Knex): Promise<void> {
  await db.raw(`CREATE TABLE telemetry_events_seq (seq INTEGER PRIMARY KEY, ${COLUMNS}, UNIQUE (tenant_id, id))`);
  await db.raw(`INSERT INTO telemetry_events_seq (${NAMES}) SELECT ${NAMES} FROM telemetry_events ORDER BY rowid`);
  await db.raw('DROP TABLE telemetry_events');
  await db.raw('ALTER TABLE telemetry_events_seq RENAME TO telemetry_events');
  await db.raw('CREATE INDEX telemetry_events_tenant_ts ON telemetry_events (tenant_id, ts)');
  await db.raw(`CREATE INDEX telemetry_events_tenant_type_ts ON telemetry_events
    (tenant_id, type, ts, model, name, provider, kernel, status, result, duration_ms, value, input_tokens, output_tokens, cost_usd)`);
  for (const t of ['telemetry_trace_hot', 'telemetry_trace_cold']) {
    await db.raw(`CREATE TABLE ${t} (trace_key text NOT NULL, seq integer NOT NULL, PRIMARY KEY (trace_key, seq)) WITHOUT ROWID`);
  }
  await db.raw(`INSERT INTO telemetry_trace_cold SELECT ${TRACE_KEY_SQL}, seq FROM telemetry_events ORDER BY 1, 2`);
  await db.raw(`CREATE TRIGGER telemetry_trace_hot_add AFTER INSERT ON telemetry_events
    BEGIN INSERT INTO telemetry_trace_hot VALUES (substr(NEW.trace_id, -8), NEW.seq); END`);
  await db.raw(`CREATE TRIGGER telemetry_trace_remove AFTER DELETE ON telemetry_events BEGIN
    DELETE FROM telemetry_trace_hot WHERE trace_key = substr(OLD.trace_id, -8) AND seq = OLD.seq;
    DELETE FROM telemetry_trace_cold WHERE trace_key = substr(OLD.trace_id, -8) AND seq = OLD.seq; END`);
}

/** SQLite migration: the hot table in insertion order (see the top of this file). */
export async function migrateSqliteHotAppend(db: Knex): Promise<void> {
  await db.raw('DROP TRIGGER telemetry_trace_hot_add');
  await db.raw('DROP TRIGGER telemetry_trace_remove');
  await db.raw('CREATE TABLE telemetry_trace_hot_seq (seq integer PRIMARY KEY, trace_key text NOT NULL)');
  await db.raw('INSERT INTO telemetry_trace_hot_seq SELECT seq, trace_key FROM telemetry_trace_hot ORDER BY seq');
  await db.raw('DROP TABLE telemetry_trace_hot');
  await db.raw('ALTER TABLE telemetry_trace_hot_seq RENAME TO telemetry_trace_hot');
  await db.raw(`CREATE TRIGGER telemetry_trace_hot_add AFTER INSERT ON telemetry_events
    BEGIN INSERT INTO telemetry_trace_hot VALUES (NEW.seq, ${TRACE_KEY_SQL.replace('trace_id', 'NEW.trace_id')}); END`);
  await db.raw(`CREATE TRIGGER telemetry_trace_remove AFTER DELETE ON telemetry_events BEGIN
    DELETE FROM telemetry_trace_hot WHERE seq = OLD.seq;
    DELETE FROM telemetry_trace_cold WHERE trace_key = ${TRACE_KEY_SQL.replace('trace_id', 'OLD.trace_id')} AND seq = OLD.seq; END`);
}

/** The rows of one trace key (a `seq IN (...)` clause and its bindings). */
export function traceRowsClause(traceId: string): [string, string[]] {
  const key = traceKey(traceId);
  return ['seq IN (SELECT seq FROM telemetry_trace_hot WHERE trace_key = ? UNION ALL SELECT seq FROM telemetry_trace_cold WHERE trace_key = ?)', [key, key]];
}

/** Counts the hot entries and moves them into the cold table, in a commit that already writes. */
export class TraceIndexMerger {
  private hot: number | null = null;

  constructor(private readonly mergeAt: number) {}

  /** Reads the number of hot entries once; later commits keep it up to date. */
  async count(query: (sql: string) => Promise<Array<{ n: number }>>): Promise<void> {
    if (this.hot !== null) return;
    const [row] = await query('SELECT count(*) AS n FROM telemetry_trace_hot');
    this.hot = Number(row?.n ?? 0);
  }

  /**
   * The statements to run in the ingest transaction after it inserts `added` rows: the
   * merge when the hot table is due, else nothing. Sorted by (trace_key, seq), the entries
   * go into the cold table's pages one after the other.
   */
  statements(added: number): string {
    this.hot = (this.hot ?? 0) + added;
    if (this.hot < this.mergeAt) return '';
    this.hot = 0;
    return 'INSERT INTO telemetry_trace_cold SELECT trace_key, seq FROM telemetry_trace_hot ORDER BY trace_key, seq; DELETE FROM telemetry_trace_hot;';
  }

  /** The commit that counted or merged failed: count again from the table next time. */
  reset(): void {
    this.hot = null;
  }
}
