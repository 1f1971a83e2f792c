// Telemetry at scale (issue 22): ingest throughput and query latency with 1 million and then
// 10 million stored events, on SQLite and on PostgreSQL. The events are seeded a day of
// 1,000,000 at a time, each day older than the last, so the one-hour window queried holds
// the same 41,667 events at both sizes: what grows is the store, not the answer.
// Opt-in (BENCH_ONLY=scale): seeding 10 million events takes minutes and gigabytes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { drive, startService, type Figures, type Row } from './harness';
import type { Scenario } from './scenarios';
import { llmBatch, seed, serviceWithToken, stop } from './telemetry';

const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DAY = 1_000_000;
const DAYS = Number(process.env.BENCH_SCALE_DAYS ?? 10);

type Db = ReturnType<typeof knexFactory>;

/** One day of events on PostgreSQL, as seed() does on SQLite. */
async function seedPg(db: Db, tenant: string, count: number, at: { endSec: number; prefix: string; traceBase: number }): Promise<{ traceId: string }> {
  const start = at.endSec - 86_400;
  await db.raw(
    `INSERT INTO telemetry_events (tenant_id, id, type, trace_id, span_id, parent_span_id, ts, duration_ms, status, name, model, provider, kernel, result, value, input_tokens, output_tokens, cost_usd, data)
     SELECT ?, ? || i, 'llm-call', lpad(to_hex(?::bigint + i / 5 + 1), 32, '0'), lpad(to_hex(i + 1), 16, '0'),
       CASE WHEN i % 5 = 0 THEN NULL ELSE lpad(to_hex(i - (i % 5) + 1), 16, '0') END,
       to_char(to_timestamp(?::double precision + i * ?::double precision) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 50 + (i * 7919) % 2000,
       CASE WHEN i % 50 = 0 THEN 'error' ELSE 'ok' END, 'chat', 'model-' || (i % 4), 'openai', NULL, NULL, NULL,
       100 + i % 900, 10 + i % 300, 0.001, '{"provider":"openai","request_model":"model-' || (i % 4) || '","operation":"chat"}'
     FROM generate_series(0::bigint, ?::bigint) AS i`,
    [tenant, at.prefix, at.traceBase, start, 86_400 / count, count - 1],
  );
  await db.raw('ANALYZE telemetry_events');
  return { traceId: (at.traceBase + Math.floor(count / 2 / 5) + 1).toString(16).padStart(32, '0') };
}

interface Store {
  url: string;
  token: string;
  db: Db;
  seedDay(day: number): Promise<{ traceId: string }>;
  close(): Promise<void>;
}

async function sqliteStore(): Promise<Store> {
  const svc = await serviceWithToken();
  const now = Date.now() / 1000;
  return {
    url: svc.url,
    token: svc.token,
    db: svc.db,
    seedDay: (day) => seed(svc.db, 'platform', DAY, { endSec: now - day * 86_400, prefix: `seed${day}-`, traceBase: day * DAY }),
    close: async () => {
      await svc.db.destroy();
      await stop(svc);
    },
  };
}

async function pgStore(): Promise<Store | null> {
  const schema = `bench_scale_${process.pid}`;
  const admin = knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } });
  try {
    await admin.raw('select 1');
  } catch (err) {
    process.stdout.write(`telemetry at scale on PostgreSQL: skipped, ${PG_URL} does not answer (${(err as Error).message})\n`);
    await admin.destroy();
    return null;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-scale-'));
  const file = path.join(dir, 'config.json');
  fs.writeFileSync(file, JSON.stringify({ plans: { enterprise: { requestsPerMinute: 1_000_000_000 } }, database: { url: PG_URL, schema } }));
  const svc = await startService({ CONFIG_FILE: file });
  const login = await fetch(`${svc.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: svc.adminEmail, password: svc.adminPassword }) });
  const token = ((await login.json()) as { token: string }).token;
  const db = knexFactory({ client: 'pg', connection: PG_URL, searchPath: [schema], pool: { min: 0, max: 1 } });
  const now = Date.now() / 1000;
  return {
    url: svc.url,
    token,
    db,
    seedDay: (day) => seedPg(db, 'platform', DAY, { endSec: now - day * 86_400, prefix: `seed${day}-`, traceBase: day * DAY }),
    close: async () => {
      svc.proc.kill('SIGTERM');
      await db.destroy();
      await admin.raw('DROP SCHEMA IF EXISTS ?? CASCADE', [schema]).catch(() => undefined);
      await admin.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(svc.dataDir, { recursive: true, force: true });
    },
  };
}

/** Ingest, one trace and a one-hour aggregate against the store as it is now. */
async function measure(s: Store, traceId: string): Promise<{ ingest: Figures; trace: Figures; aggregate: Figures; stored: number }> {
  const auth = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' };
  const stored = Number((await s.db('telemetry_events').count({ n: '*' }).first())?.n);
  const trace = await drive({ url: `${s.url}/observability/v1/query/traces/${traceId}`, headers: auth, connections: 1 });
  const until = new Date(Date.now() - 6 * 3600_000).toISOString();
  const aggregate = await drive({ url: `${s.url}/observability/v1/query/metrics/llm-calls?until=${until}&group_by=model`, headers: auth, connections: 1 });
  const bodyFile = path.join(os.tmpdir(), `pc-bench-batch-${process.pid}.json`);
  fs.writeFileSync(bodyFile, llmBatch(500));
  const ingest = await drive({ url: `${s.url}/observability/v1/ingest/llm-call`, method: 'POST', headers: auth, bodyFile, connections: 4 });
  fs.rmSync(bodyFile, { force: true });
  return { ingest, trace, aggregate, stored };
}

async function onStore(label: string, open: () => Promise<Store | null>): Promise<Row[]> {
  const s = await open();
  if (!s) return [];
  try {
    const t0 = Date.now();
    const { traceId } = await s.seedDay(0);
    const small = await measure(s, traceId);
    process.stdout.write(`scale (${label}): ${small.stored} events after ${Math.round((Date.now() - t0) / 1000)} s; seeding ${DAYS - 1} more days\n`);
    for (let day = 1; day < DAYS; day++) await s.seedDay(day);
    const big = await measure(s, traceId);
    const events = (f: Figures) => Math.round(f.rps * 500);
    const at = (n: number) => `${(n / 1e6).toFixed(1)}M stored`;
    return [
      { name: `ingest llm-call, 500/batch, ${at(small.stored)} (${label})`, figures: small.ingest, note: `${events(small.ingest)} events/s` },
      { name: `ingest llm-call, 500/batch, ${at(big.stored)} (${label})`, figures: big.ingest, note: `${events(big.ingest)} events/s, ${(big.ingest.rps / Math.max(1, small.ingest.rps)).toFixed(2)}x the small store` },
      { name: `GET query/traces/{id}, ${at(small.stored)} (${label})`, figures: small.trace, note: 'target p50 <= 50 ms' },
      { name: `GET query/traces/{id}, ${at(big.stored)} (${label})`, figures: big.trace, note: 'target p50 <= 50 ms' },
      { name: `GET query/metrics/llm-calls 1 h, ${at(small.stored)} (${label})`, figures: small.aggregate, note: '41,667 events in the hour; target p50 <= 50 ms' },
      { name: `GET query/metrics/llm-calls 1 h, ${at(big.stored)} (${label})`, figures: big.aggregate, note: '41,667 events in the hour; target p50 <= 50 ms' },
    ];
  } finally {
    await s.close();
  }
}

export const scale: Scenario = {
  name: 'telemetry at scale (1M and 10M events)',
  selfContained: true,
  explicit: true,
  async run() {
    return [...(await onStore('SQLite', sqliteStore)), ...(await onStore('PostgreSQL', pgStore))];
  },
};
