import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import type { Config } from './config';

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
      pool: { min: 0, max: 10 },
    });
    if (schema) await db.raw('CREATE SCHEMA IF NOT EXISTS ??', [schema]);
    return db;
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  const file = path.resolve(config.dataDir, config.database.sqliteFile);
  const db = knexFactory({
    client: 'sqlite3',
    connection: { filename: file },
    useNullAsDefault: true,
    // One connection: SQLite serialises writers anyway, and one connection keeps
    // transactions from waiting on each other's locks.
    pool: {
      min: 1,
      max: 1,
      afterCreate: (conn: { exec(sql: string, cb: (err: Error | null) => void): void }, done: (err: Error | null, conn: unknown) => void) => {
        conn.exec(SQLITE_PRAGMAS, (err) => done(err, conn));
      },
    },
  });
  return db;
}

/**
 * Migrations that moved to another owner (code that moved from core to a plugin): their
 * record is renamed before migrating, so a database that ran them does not run them again.
 */
const MOVED_MIGRATIONS: Record<string, string> = {
  'core/chaos_001': 'chaos/chaos_001',
};

/** Runs every owner's migrations in the order given (core first, then plugins in boot order). */
export async function migrate(db: Knex, owners: Array<{ owner: string; migrations: Migration[] }>): Promise<void> {
  if (await db.schema.hasTable('schema_migrations')) {
    for (const [from, to] of Object.entries(MOVED_MIGRATIONS)) await db('schema_migrations').where({ name: from }).update({ name: to });
  }
  const list = owners.flatMap(({ owner, migrations }) =>
    migrations.map((m) => ({ ...m, name: `${owner}/${m.name}` })),
  );
  const source: Knex.MigrationSource<(typeof list)[number]> = {
    getMigrations: async () => list,
    getMigrationName: (m) => m.name,
    getMigration: async (m) => ({ up: m.up, down: m.down ?? (async () => undefined) }),
  };
  await db.migrate.latest({ migrationSource: source, tableName: 'schema_migrations', disableMigrationsListValidation: true });
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
    for (const row of chunk) for (const c of columns) bindings.push((row[c] as unknown) ?? null);
    await db.raw(head + Array(chunk.length).fill(tuple).join(', '), bindings as Knex.RawBinding[]);
  }
}
