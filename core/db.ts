import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import type { Config } from './config';
import { REWRITTEN_MIGRATIONS } from './migration-helpers';

export type Db = Knex;

export interface Migration {
  /** Unique within its owner; the stored name is `<owner>/<name>`, so keep a sortable prefix. */
  name: string;
  up(db: Knex): Promise<void>;
  down?(db: Knex): Promise<void>;
}

export function isPostgres(db: Knex): boolean {
  return db.client.config.client === 'pg';
}

/**
 * synchronous = NORMAL in WAL mode syncs at checkpoints, not at every commit: a committed
 * transaction survives a crash of the process (it is in the WAL file the OS holds), only a
 * power loss can take the last commits back. temp_store = MEMORY keeps the statement journal
 * of multi-row inserts off the disk. A larger page cache (32 MiB) keeps a big transaction from
 * spilling pages mid-way, and a checkpoint every 4000 WAL pages (16 MiB, trimmed back to that
 * size after) copies a page rewritten by many commits once instead of at every 1000 pages.
 */
const SQLITE_PRAGMAS = [
  'journal_mode = WAL', 'synchronous = NORMAL', 'foreign_keys = ON', 'busy_timeout = 5000',
  'temp_store = MEMORY', 'cache_size = -32768', 'wal_autocheckpoint = 4000', 'journal_size_limit = 16777216',
].map((p) => `PRAGMA ${p};`).join(' ');

export async function openDatabase(config: Config): Promise<Knex> {
  if (config.database.url) {
    const schema = config.database.schema;
    const db = knexFactory({
      client: 'pg',
      connection: config.database.url,
      searchPath: schema ? [schema] : undefined,
      pool: { min: 0, max: config.database.poolSize },
    });
    if (schema) await db.raw('CREATE SCHEMA IF NOT EXISTS ??', [schema]);
    nameStatements(db);
    return db;
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  const file = path.resolve(config.dataDir, config.database.sqliteFile);
  const db = sqlite(file, 1, SQLITE_PRAGMAS);
  // An in-memory database is private to its connection: nothing to share with readers.
  const readers = config.database.readConnections;
  if (readers > 0 && config.database.sqliteFile !== ':memory:') routeReads(db, sqlite(file, readers, `${SQLITE_PRAGMAS} PRAGMA query_only = ON;`));
  return db;
}

/** The builder methods that only read (knex's `_method`, and its query object's `method`). */
const READS = new Set(['select', 'first', 'pluck']);

type SqliteConn = { exec(sql: string, cb: (err: Error | null) => void): void };

function sqlite(file: string, connections: number, pragmas: string): Knex {
  const db = knexFactory({
    client: 'sqlite3',
    connection: { filename: file },
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: connections,
      afterCreate: (conn: SqliteConn, done: (err: Error | null, conn: unknown) => void) => conn.exec(pragmas, (err) => done(err, conn)),
    },
  });
  reuseStatements(db);
  return db;
}

interface SqliteStatement {
  all(params: unknown[], cb: (this: unknown, err: Error | null, rows: unknown[]) => void): void;
  finalize(cb?: () => void): void;
}
interface SqliteHandle { prepare(sql: string, cb: (err: Error | null) => void): SqliteStatement }
interface QueryObject { sql?: string; method?: string; bindings?: unknown[]; response?: unknown; context?: unknown }
interface SqliteClient {
  _query: (this: SqliteClient, conn: unknown, obj: QueryObject) => Promise<QueryObject>;
  destroyRawConnection: (this: SqliteClient, conn: unknown) => Promise<void>;
}

/**
 * Selects run on a statement prepared once per connection and kept (the most recent 200
 * texts): knex's sqlite3 client prepares, runs and finalizes a new statement for every
 * query, three trips to the thread pool where one does. A kept statement holds no read
 * snapshot between runs: node-sqlite3 steps it to the end and resets it before the next.
 */
function reuseStatements(db: Knex): void {
  const client = db.client as SqliteClient;
  const own = client._query;
  const kept = new WeakMap<object, Map<string, Promise<SqliteStatement>>>();
  const prepared = (conn: SqliteHandle, sql: string): Promise<SqliteStatement> => {
    let cache = kept.get(conn);
    if (!cache) kept.set(conn, (cache = new Map()));
    const known = cache.get(sql);
    if (known) return known;
    const made = new Promise<SqliteStatement>((resolve, reject) => {
      const stmt = conn.prepare(sql, (err) => (err ? reject(err) : resolve(stmt)));
    });
    const map = cache;
    // A text that does not prepare (its table changed or went) is tried again next time.
    made.catch(() => map.get(sql) === made && map.delete(sql));
    map.set(sql, made);
    if (map.size > KEPT_STATEMENTS) {
      const [oldest, old] = map.entries().next().value!;
      map.delete(oldest);
      old.then((st) => st.finalize(), () => undefined);
    }
    return made;
  };
  client._query = async function (this: SqliteClient, conn: unknown, obj: QueryObject) {
    if (!obj.sql || !READS.has(obj.method ?? '')) return own.call(this, conn, obj);
    const stmt = await prepared(conn as SqliteHandle, obj.sql);
    return new Promise((resolve, reject) => {
      stmt.all(obj.bindings ?? [], function (err, rows) {
        if (err) return reject(err);
        obj.response = rows;
        obj.context = this;
        resolve(obj);
      });
    });
  };
  // SQLite refuses to close a connection with statements left: they are finalized first.
  const close = client.destroyRawConnection;
  client.destroyRawConnection = async function (this: SqliteClient, conn: unknown) {
    const cache = kept.get(conn as object);
    kept.delete(conn as object);
    for (const p of cache?.values() ?? []) {
      const st = await p.catch(() => null);
      if (st) await new Promise<void>((resolve) => st.finalize(resolve));
    }
    return close.call(this, conn);
  };
}
const KEPT_STATEMENTS = 200;

/**
 * Selects run as named statements on PostgreSQL: each connection parses a text once, and
 * after five runs PostgreSQL keeps a generic plan instead of planning every query, the
 * largest part of its own time on a one-row read. The first KEPT_STATEMENTS select texts get
 * a name; later ones run unnamed, so that no connection holds statements without bound.
 */
function nameStatements(db: Knex): void {
  const client = db.client as { _query: (this: unknown, conn: unknown, obj: QueryObject & { options?: Record<string, unknown> }) => Promise<unknown> };
  const own = client._query;
  const names = new Map<string, string>();
  client._query = function (conn, obj) {
    if (obj.sql && READS.has(obj.method ?? '') && !obj.options?.name) {
      let name = names.get(obj.sql);
      if (name === undefined && names.size < KEPT_STATEMENTS) names.set(obj.sql, (name = `pc_read_${names.size}`));
      if (name !== undefined) obj.options = { ...obj.options, name };
    }
    return own.call(this, conn, obj);
  };
}

/** The parts of knex's query builder and client that routeReads looks at. */
interface RoutedBuilder { _method?: string; _connection?: unknown; _single?: { lock?: unknown } }
interface RoutedClient { runner: (this: RoutedClient, builder: RoutedBuilder) => unknown }

/**
 * One connection writes (SQLite serialises writers anyway, and one writer keeps
 * transactions from waiting on each other's locks); plain reads outside a transaction go
 * to a pool of read-only connections, so that they neither queue behind each other nor
 * behind a write. Only builder selects move (`db(t).where(..)`, `.first()`, `.pluck()`
 * without a lock): raw SQL, schema queries and everything inside a transaction (its
 * queries run on the transaction's client, not this one) stay on the writer.
 *
 * Read-your-writes: in WAL mode a read transaction sees every transaction committed before
 * it began, on any connection. A write is acknowledged (its promise resolves) after its
 * commit, so a read started after that, on any reader, sees it; a read that overlaps a
 * write still in flight sees the state before it, as on PostgreSQL.
 */
function routeReads(writer: Knex, reader: Knex): void {
  const client = writer.client as RoutedClient;
  const readClient = reader.client as RoutedClient;
  const own = client.runner;
  client.runner = function (this: RoutedClient, builder: RoutedBuilder) {
    // A transaction's client inherits this method: `this` is then the transaction's.
    const plainRead = this === client && READS.has(builder._method ?? '') && !builder._connection && !builder._single?.lock;
    return plainRead ? readClient.runner(builder) : own.call(this, builder);
  };
  // knex.destroy() ends in its client's destroy: the readers close with the writer.
  const writerClient = writer.client as { destroy(cb?: unknown): Promise<void> };
  const destroy = writerClient.destroy.bind(writerClient);
  writerClient.destroy = async (cb?: unknown) => {
    await reader.destroy();
    return destroy(cb);
  };
}

/**
 * Migrations that moved to another owner (code that moved from core to a plugin): their
 * record is renamed before migrating, so a database that ran them does not run them again.
 */
const MOVED_MIGRATIONS: Record<string, string> = {
  'core/chaos_001': 'chaos/chaos_001',
  'core/003_auth_tokens': 'auth/003_auth_tokens',
  'core/003_telemetry_events': 'observability/003_telemetry_events',
  'core/004_telemetry_trace_key': 'observability/004_telemetry_trace_key',
  'core/005_telemetry_trace_hot_cold': 'observability/005_telemetry_trace_hot_cold',
  'core/006_telemetry_trace_hot_append': 'observability/006_telemetry_trace_hot_append',
};

/** Runs every owner's migrations in the order given (core first, then plugins in boot order). */
export async function migrate(db: Knex, owners: Array<{ owner: string; migrations: Migration[] }>): Promise<void> {
  if (await db.schema.hasTable('schema_migrations')) {
    for (const [from, to] of Object.entries(MOVED_MIGRATIONS)) await db('schema_migrations').where({ name: from }).update({ name: to });
  }
  // A moved migration's code is compiled in another file: its checksum is taken again.
  if (await db.schema.hasTable(CHECKSUMS)) await db(CHECKSUMS).whereIn('name', Object.keys(MOVED_MIGRATIONS)).delete();
  const list = [checksumTable, ...owners.flatMap(({ owner, migrations }) => migrations.map((m) => ({ ...m, name: `${owner}/${m.name}` })))];
  await checkApplied(db, list);
  const source: Knex.MigrationSource<(typeof list)[number]> = {
    getMigrations: async () => list,
    getMigrationName: (m) => m.name,
    getMigration: async (m) => ({ up: (k: Knex) => m.up(k), down: (k: Knex) => (m.down ? m.down(k) : Promise.resolve()) }),
  };
  await db.migrate.latest({ migrationSource: source, tableName: 'schema_migrations', disableMigrationsListValidation: true });
  await recordChecksums(db, list);
}

// ---- checksums: an applied migration must never change ----

const CHECKSUMS = 'schema_migration_checksums';

/** The checksum of a migration's code (its compiled up and down functions). */
export function migrationChecksum(m: Migration): string {
  return crypto.createHash('sha256').update(m.up.toString()).update('\0').update(m.down?.toString() ?? '').digest('hex');
}

/**
 * Refuses to start when a migration that ran on this database has changed since: its edit
 * would never run here, and the database would no longer be what the code expects. Helpers
 * the migration calls are not part of its checksum.
 */
async function checkApplied(db: Knex, list: Migration[]): Promise<void> {
  if (!(await db.schema.hasTable(CHECKSUMS))) return;
  const stored = new Map((await db(CHECKSUMS).select('name', 'checksum')).map((r: { name: string; checksum: string }) => [r.name, r.checksum]));
  for (const m of list) {
    if (!REWRITTEN_MIGRATIONS[m.name] || stored.get(m.name) !== REWRITTEN_MIGRATIONS[m.name]) continue;
    stored.set(m.name, migrationChecksum(m));
    await db(CHECKSUMS).where({ name: m.name }).update({ checksum: stored.get(m.name) });
  }
  const changed = list.filter((m) => stored.has(m.name) && stored.get(m.name) !== migrationChecksum(m)).map((m) => m.name);
  if (changed.length === 0) return;
  throw new Error(
    `migration ${changed.join(', ')} changed after it was applied to this database (its checksum differs). ` +
      'Never edit an applied migration: restore it and add the next numbered migration with the change ' +
      '(in development, starting from an empty database also works).',
  );
}

/** A migration like the others, so that knex's migration lock covers hosts starting together. */
const checksumTable: Migration = {
  name: 'core/000_migration_checksums',
  up: async (db) => {
    await db.schema.createTable(CHECKSUMS, (t) => {
      t.string('name').primary();
      t.string('checksum').notNullable();
      t.string('recorded_at').notNullable();
    });
  },
};

/** Stores the checksum of every applied migration that has none yet (new ones, and databases older than checksums). */
async function recordChecksums(db: Knex, list: Migration[]): Promise<void> {
  const applied = new Set((await db('schema_migrations').select('name')).map((r: { name: string }) => r.name));
  const known = new Set((await db(CHECKSUMS).select('name')).map((r: { name: string }) => r.name));
  const rows = list.filter((m) => applied.has(m.name) && !known.has(m.name)).map((m) => ({ name: m.name, checksum: migrationChecksum(m), recorded_at: nowIso() }));
  // Another host on the same PostgreSQL may record them at the same time.
  for (let i = 0; i < rows.length; i += 200) await db(CHECKSUMS).insert(rows.slice(i, i + 200)).onConflict('name').ignore();
}

/** The first columns of a tenant resource table: a UUID id and the tenant. */
export function tenantResource(t: Knex.CreateTableBuilder): void {
  t.string('id', 36).primary();
  t.string('tenant_id', 64).notNullable();
}

/** created_at and updated_at (ISO text), and the (tenant_id, created_at) index pageOf lists use. */
export function resourceStamps(t: Knex.CreateTableBuilder): void {
  t.string('created_at', 32).notNullable();
  t.string('updated_at', 32).notNullable();
  t.index(['tenant_id', 'created_at']);
}

/**
 * Runs several reads against one snapshot, so figures computed from more than one query
 * agree with each other while writes go on. PostgreSQL: a repeatable-read transaction.
 * SQLite: a transaction on the writer connection (WAL keeps the snapshot of its first read).
 */
export function readSnapshot<T>(db: Knex, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return isPostgres(db) ? db.transaction(fn, { isolationLevel: 'repeatable read' }) : db.transaction(fn);
}

/** Timestamp column helper: ISO text on both databases keeps comparisons portable. */
export function nowIso(): string {
  return new Date().toISOString();
}

/**
 * Inserts many rows with one multi-row VALUES statement per chunk. Knex's insert builder
 * wraps and escapes every value on its own and costs milliseconds for a few hundred rows;
 * this builds the statement once per chunk size and binds the values as they are.
 */
export async function insertRows<T extends object>(db: Knex, table: string, columns: Array<keyof T & string>, rows: T[]): Promise<void> {
  // Well under SQLite's 32,766 and PostgreSQL's 65,535 bound parameters.
  const perChunk = Math.max(1, Math.floor(30_000 / columns.length));
  const head = `INSERT INTO ?? (${columns.map(() => '??').join(', ')}) VALUES `;
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  for (let i = 0; i < rows.length; i += perChunk) {
    const chunk = rows.slice(i, i + perChunk);
    const bindings: unknown[] = [table, ...columns];
    for (const row of chunk) for (const c of columns) bindings.push((row[c]) ?? null);
    await db.raw(head + Array(chunk.length).fill(tuple).join(', '), bindings as Knex.RawBinding[]);
  }
}
