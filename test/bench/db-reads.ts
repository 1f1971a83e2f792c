// DB-backed reads (issue 22): one indexed row and filtered lists of 20 rows, on SQLite and
// on PostgreSQL, each against bare Express measured in the same run (run.ts adds the ratio).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import sqlite3 from 'sqlite3';
import { loadConfig } from '../../core/config';
import { openDatabase } from '../../core/db';
import { ActionLog } from '../../core/actions';
import type { EventBus } from '../../core/events';
import { concurrent, drive, startService, DURATION, CONNECTIONS, type Row } from './harness';
import type { Scenario } from './scenarios';

const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function call(url: string, method: string, body: unknown, token?: string): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function measure(label: string, database: object): Promise<Row[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-db-'));
  const file = path.join(dir, 'config.json');
  fs.writeFileSync(file, JSON.stringify({ plans: { bench: { requestsPerMinute: 1_000_000_000 } }, database }));
  const svc = await startService({ CONFIG_FILE: file });
  try {
    const admin = (await call(`${svc.url}/auth/login`, 'POST', { email: svc.adminEmail, password: svc.adminPassword })).token as string;
    await call(`${svc.url}/billing/assign-plan`, 'POST', { tenant_id: 'platform', plan: 'bench' }, admin);
    // 60 incidents (each also records an action), 20 of them high: every list below has 20 rows to show.
    for (let i = 0; i < 60; i++) {
      await call(`${svc.url}/incidents/detect`, 'POST', { title: `bench incident ${i}`, severity: i % 3 === 0 ? 'high' : 'low', domain: 'trading' }, admin);
    }
    const headers = { authorization: `Bearer ${admin}` };
    const lists = {
      history: `${svc.url}/ops/actions/history?limit=20&source=manual`,
      incidents: `${svc.url}/ops/incidents/active?severity=high&limit=20`,
    };
    // A figure for a list that is not 20 rows long would measure something else.
    const h = (await call(lists.history, 'GET', undefined, admin)).actions as unknown[];
    const inc = (await call(lists.incidents, 'GET', undefined, admin)).incidents as unknown[];
    if (h.length !== 20 || inc.length !== 20) throw new Error(`db bench: lists hold ${h.length} and ${inc.length} rows, not 20`);
    const target = (x: string) => `target >= ${x} bare Express`;
    const rows: Row[] = [
      { name: `GET /auth/me (${label})`, figures: await drive({ url: `${svc.url}/auth/me`, headers }), note: target('0.8') },
      { name: `GET /ops/actions/history?limit=20&source=manual (${label})`, figures: await drive({ url: lists.history, headers }), note: target('0.7') },
      { name: `GET /ops/incidents/active?severity=high&limit=20 (${label})`, figures: await drive({ url: lists.incidents, headers }), note: target('0.7') },
    ];
    rows.push(...(await dataLayerAlone(label, svc.dataDir, file)));
    return rows;
  } finally {
    svc.proc.kill('SIGTERM');
  }
}

/**
 * The history list through the service's own data layer (core's openDatabase, the same
 * reader routing and kept statements, ActionLog.list) in this process, with as many calls in
 * flight as autocannon keeps requests, and no HTTP: the floor under the route's figure. On
 * SQLite, also the same SELECT on node-sqlite3 alone (prepared once on each of 4 read-only
 * connections): the driver's own floor. CPU is this process's (main thread and thread pool).
 */
async function dataLayerAlone(label: string, dataDir: string, configFile: string): Promise<Row[]> {
  const db = await openDatabase(loadConfig({ CONFIG_FILE: configFile, DATA_DIR: dataDir }));
  // list() reads only; the bus is for record(), which this never calls.
  const log = new ActionLog(db, {} as EventBus);
  const filter = { source: 'manual', limit: 20, scope: { tenant_id: 'platform', platform: true } };
  const rows: Row[] = [];
  try {
    const page = await log.list(filter);
    if (page.actions.length !== 20) throw new Error(`db bench: the data layer read ${page.actions.length} rows, not 20`);
    rows.push(await callsPerSecond(`ActionLog.list, 20 rows, no HTTP (${label})`, () => log.list(filter)));
  } finally {
    await db.destroy();
  }
  if (label !== 'SQLite') return rows;
  // The text ActionLog.list sends for this filter (DEBUG=knex:query prints it).
  const sql = 'select * from `actions` where `source` = ? and (`tenant_id` = ? or `tenant_id` is null) order by `created_at` desc, `id` desc limit ?';
  const conns = Array.from({ length: 4 }, () => new sqlite3.Database(path.join(dataDir, 'platform.sqlite'), sqlite3.OPEN_READONLY));
  const statements = conns.map((c) => c.prepare(sql));
  let next = 0;
  const read = () => new Promise<unknown[]>((resolve, reject) => statements[next++ % 4].all(['manual', 'platform', 21], (err, r) => (err ? reject(err) : resolve(r))));
  try {
    if ((await read()).length !== 21) throw new Error('db bench: the driver read a page that is not 21 rows');
    rows.push(await callsPerSecond('the same SELECT on node-sqlite3 alone (SQLite)', read));
  } finally {
    for (const st of statements) await new Promise<void>((resolve) => st.finalize(() => resolve()));
    for (const c of conns) await new Promise<void>((resolve) => c.close(() => resolve()));
  }
  return rows;
}

/** Calls `call` CONNECTIONS at a time for DURATION seconds: calls/s, latency and CPU a call. */
async function callsPerSecond(name: string, call: () => Promise<unknown>): Promise<Row> {
  const cpu = process.cpuUsage();
  const figures = await concurrent(CONNECTIONS, DURATION, call);
  const used = process.cpuUsage(cpu);
  return { name, figures, note: `${((used.user + used.system) / (figures.rps * DURATION)).toFixed(0)} us CPU a call, no HTTP` };
}

/** PostgreSQL when it answers, in a schema of its own dropped after. */
async function onPostgres(): Promise<Row[]> {
  const schema = `bench_${process.pid}_${Date.now()}`;
  const admin = knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } });
  try {
    await admin.raw('select 1');
  } catch (err) {
    process.stdout.write(`db reads on PostgreSQL: skipped, ${PG_URL} does not answer (${(err as Error).message})\n`);
    await admin.destroy();
    return [];
  }
  try {
    return await measure('PostgreSQL', { url: PG_URL, schema });
  } finally {
    await admin.raw('DROP SCHEMA IF EXISTS ?? CASCADE', [schema]).catch(() => undefined);
    await admin.destroy();
  }
}

export const dbReads: Scenario = {
  name: 'db reads (SQLite, PostgreSQL)',
  selfContained: true,
  async run() {
    return [...(await measure('SQLite', {})), ...(await onPostgres())];
  },
};
