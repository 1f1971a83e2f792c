import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import type { Config } from '../../../core/config';
import { isPostgres, type Db } from '../../../core/db';

// Copies of the database: a scratch copy for dry runs, a backup before an upgrade and its
// restore. SQLite: the online backup API (a consistent copy while the service runs).
// PostgreSQL: a scratch schema filled table by table for dry runs; pg_dump / pg_restore of
// the service's schema for backups.

interface SqliteBackup {
  step(pages: number, cb: (err: Error | null) => void): void;
  finish(cb?: () => void): void;
  completed: boolean;
  failed: boolean;
}
interface SqliteConn {
  backup(file: string, dest: string, source: string, fileIsDest: boolean, cb: (err: Error | null) => void): SqliteBackup;
}

async function sqliteBackup(db: Db, file: string, toFile: boolean): Promise<void> {
  const conn = (await db.client.acquireConnection()) as SqliteConn;
  try {
    await new Promise<void>((resolve, reject) => {
      const b = conn.backup(file, 'main', 'main', toFile, (err) => {
        if (err) return reject(err);
        b.step(-1, (e) => {
          b.finish();
          if (e && !b.completed) reject(e);
          else resolve();
        });
      });
    });
  } finally {
    await db.client.releaseConnection(conn);
  }
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => execFile(cmd, args, { timeout: 600_000 }, (err, _o, stderr) => (err ? reject(new Error(`${cmd}: ${stderr.trim() || err.message}`)) : resolve())));
}

export function workDir(config: Config): string {
  const dir = path.resolve(config.dataDir, 'upgrades');
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** A throwaway copy of the database to run migrations on; `drop` removes it. */
export async function scratchCopy(db: Db, config: Config, id: string): Promise<{ db: Knex; drop: () => Promise<void> }> {
  if (!isPostgres(db)) {
    const file = path.join(workDir(config), `dry-run-${id}.sqlite`);
    await sqliteBackup(db, file, true);
    const copy = knexFactory({ client: 'sqlite3', connection: { filename: file }, useNullAsDefault: true, pool: { min: 1, max: 1 } });
    return { db: copy, drop: async () => { await copy.destroy(); fs.rmSync(file, { force: true }); } };
  }
  const source = config.database.schema ?? 'public';
  const scratch = `upgrade_dry_${id.replace(/-/g, '').slice(0, 16)}`;
  await db.raw('CREATE SCHEMA ??', [scratch]);
  const tables = (await db.raw('select table_name from information_schema.tables where table_schema = ? and table_type = ?', [source, 'BASE TABLE'])).rows as Array<{ table_name: string }>;
  for (const { table_name: t } of tables) {
    await db.raw('CREATE TABLE ??.?? (LIKE ??.?? INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)', [scratch, t, source, t]);
    await db.raw('INSERT INTO ??.?? SELECT * FROM ??.??', [scratch, t, source, t]);
  }
  const copy = knexFactory({ client: 'pg', connection: config.database.url, searchPath: [scratch], pool: { min: 0, max: 2 } });
  return { db: copy, drop: async () => { await copy.destroy(); await db.raw('DROP SCHEMA IF EXISTS ?? CASCADE', [scratch]); } };
}

/** A full backup into `dir` (the upgrades' work folder by default); returns the file. */
export async function backup(db: Db, config: Config, id: string, dir = workDir(config)): Promise<string> {
  if (!isPostgres(db)) {
    const file = path.join(dir, `backup-${id}.sqlite`);
    await sqliteBackup(db, file, true);
    return file;
  }
  const file = path.join(dir, `backup-${id}.dump`);
  await run('pg_dump', ['--format=custom', `--schema=${config.database.schema ?? 'public'}`, `--file=${file}`, config.database.url!]);
  return file;
}

/**
 * The scheduler's daily backup: a file in <dataDir>/backups named by its time (what the
 * compliance control `backups` looks for), keeping the newest `keep`.
 */
export async function scheduledBackup(db: Db, config: Config, at: Date, keep: number): Promise<{ file: string; bytes: number; removed: string[] }> {
  const dir = path.resolve(config.dataDir, 'backups');
  fs.mkdirSync(dir, { recursive: true });
  const file = await backup(db, config, at.toISOString().replace(/[-:.]/g, '').replace('T', '-'), dir);
  const ours = fs.readdirSync(dir).filter((f) => /^backup-\d{8}-\d{9}Z\.(sqlite|dump)$/.test(f)).sort();
  const removed = ours.slice(0, Math.max(0, ours.length - keep));
  // With the -wal/-shm files SQLite leaves beside a copy someone opened.
  for (const f of removed) for (const x of ['', '-wal', '-shm']) fs.rmSync(path.join(dir, f + x), { force: true });
  return { file, bytes: fs.statSync(file).size, removed };
}

/** Puts a backup back in place of the live database. */
export async function restore(db: Db, config: Config, file: string): Promise<void> {
  if (!isPostgres(db)) return sqliteBackup(db, file, false);
  const schema = config.database.schema ?? 'public';
  await db.raw('DROP SCHEMA IF EXISTS ?? CASCADE', [schema]);
  await run('pg_restore', ['--no-owner', `--dbname=${config.database.url}`, file]);
}
