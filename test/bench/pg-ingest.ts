// Telemetry ingest on PostgreSQL (issue 22): batches of 500 llm-call events through the API,
// 8 connections, into a schema of its own (docs/benchmarks.md has why COPY is not used).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { drive, startService, type Row } from './harness';
import type { Scenario } from './scenarios';
import { llmBatch } from './telemetry';

const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function measure(schema: string): Promise<Row> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-pg-'));
  const file = path.join(dir, 'config.json');
  fs.writeFileSync(file, JSON.stringify({ plans: { enterprise: { requestsPerMinute: 1_000_000_000 } }, database: { url: PG_URL, schema } }));
  const svc = await startService({ CONFIG_FILE: file });
  try {
    const login = await fetch(`${svc.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: svc.adminEmail, password: svc.adminPassword }) });
    const token = ((await login.json()) as { token: string }).token;
    const bodyFile = path.join(dir, 'batch.json');
    fs.writeFileSync(bodyFile, llmBatch(500));
    const figures = await drive({ url: `${svc.url}/observability/v1/ingest/llm-call`, method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, bodyFile, connections: 8 });
    return { name: 'POST ingest/llm-call, batches of 500 (PostgreSQL)', figures, note: `${Math.round(figures.rps * 500)} events/s (target >= 50000)` };
  } finally {
    svc.proc.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const pgIngest: Scenario = {
  name: 'telemetry ingest on PostgreSQL',
  selfContained: true,
  async run() {
    const admin = knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } });
    try {
      await admin.raw('select 1');
    } catch (err) {
      process.stdout.write(`ingest on PostgreSQL: skipped, ${PG_URL} does not answer (${(err as Error).message})\n`);
      await admin.destroy();
      return [];
    }
    const schema = `bench_ingest_${process.pid}`;
    try {
      return [await measure(schema)];
    } finally {
      await admin.raw('DROP SCHEMA IF EXISTS ?? CASCADE', [schema]).catch(() => undefined);
      await admin.destroy();
    }
  },
};
