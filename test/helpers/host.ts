import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { bootstrapAdmin, createUser } from '../../plugins/auth/store';
import { loadConfig } from '../../core/config';
import { Host } from '../../core/host';
import type { Logger } from '../../core/logger';
import type { PluginDef, RouteMaker, ServiceRef } from '../../core/plugin';
import type { Role } from '../../core/roles';

export type DbKind = 'sqlite' | 'postgres';
export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  token?: string | null;
  headers?: Record<string, string>;
  /** Send this text as the body, as is. */
  raw?: string;
  form?: Record<string, string>;
}

export interface TestHost {
  host: Host;
  url: string;
  port: number;
  dataDir: string;
  admin: { email: string; password: string };
  adminToken: string;
  request<T = any>(method: string, path: string, opts?: RequestOptions): Promise<Reply<T>>;
  /** Creates a user with a role (in a tenant, made when missing) and returns a token for it. */
  userToken(role: Role, tenantId?: string, plan?: string): Promise<{ token: string; userId: string; tenantId: string; email: string }>;
  stop(): Promise<void>;
}

export interface StartOptions {
  db?: DbKind;
  config?: Record<string, unknown>;
  plugins?: PluginDef[];
  env?: Record<string, string>;
  /** Reuse a data directory (restart tests). */
  dataDir?: string;
  /** Reuse a PostgreSQL schema (restart tests). */
  pgSchema?: string;
  logger?: Logger;
  /** Services to replace, by reference (core's, e.g. the clock, or a plugin's). */
  overrides?: Array<[ServiceRef<any>, unknown]>;
}

export async function startHost(opts: StartOptions = {}): Promise<TestHost> {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pc-test-'));
  const db = opts.db ?? 'sqlite';
  const pgSchema = opts.pgSchema ?? `t_${crypto.randomBytes(6).toString('hex')}`;
  const base: Record<string, unknown> = {
    env: 'test',
    server: { port: 0, host: '127.0.0.1', validateResponses: true, shutdownGraceMs: 2000 },
    dataDir,
    log: { level: process.env.TEST_LOG_LEVEL ?? 'silent' },
    auth: { adminPassword: 'admin-password-for-tests' },
    // Tests of other areas run as the platform admin (enterprise plan) and log in freely:
    // generous budgets here; the limit tests set real ones (opts.config / opts.limits).
    plans: { enterprise: { requestsPerMinute: 1_000_000 } },
    limits: { clientAddressPerWindow: 1_000_000, redisPrefix: `pc-test-${crypto.randomBytes(6).toString('hex')}` },
    database: db === 'postgres' ? { url: PG_URL, schema: pgSchema } : {},
    // One single-thread node per kernel keeps every test host light; mesh tests ask for more.
    mesh: { nodesPerKernel: 1, threadsPerNode: 1 },
  };
  const config = loadConfig(opts.env ?? {}, merge(base, opts.config ?? {}));
  const host = new Host({ config, plugins: opts.plugins, logger: opts.logger, overrides: opts.overrides });
  let started;
  try {
    started = await host.start();
  } catch (err) {
    await host.stop().catch(() => undefined);
    throw err;
  }
  const url = `http://127.0.0.1:${started.port}`;
  const admin = { email: config.auth.adminEmail, password: config.auth.adminPassword! };
  // The auth plugin makes the first admin; hosts started without it get one here.
  await bootstrapAdmin(host.services.db, config);
  const adminRow = await host.services.db('users').where({ email: admin.email }).first();
  const adminToken = host.services.auth.sign({ id: adminRow.id, tenantId: adminRow.tenant_id, role: 'admin', email: adminRow.email }).token;

  const request = async <T>(method: string, p: string, o: RequestOptions = {}): Promise<Reply<T>> => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    const token = o.token === undefined ? adminToken : o.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (o.raw !== undefined) {
      body = o.raw;
      headers['content-type'] ??= 'application/json';
    } else if (o.form) {
      body = new URLSearchParams(o.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(url + p, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON: keep the text */
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  };

  let n = 0;
  const userToken = async (role: Role, tenantId = 'platform', plan = 'enterprise') => {
    const dbh = host.services.db;
    if (!(await dbh('tenants').where({ id: tenantId }).first())) {
      await dbh('tenants').insert({ id: tenantId, name: tenantId, plan, domains: '[]', created_at: new Date().toISOString() });
    }
    const email = `${role}-${++n}-${crypto.randomBytes(3).toString('hex')}@${tenantId}.test`;
    const user = await createUser(dbh, { tenantId, email, name: `${role} ${n}`, role, password: 'a-long-test-password-1' });
    const { token } = host.services.auth.sign({ id: user.id, tenantId, role, email });
    return { token, userId: user.id, tenantId, email };
  };

  return {
    host,
    url,
    port: started.port,
    dataDir,
    admin,
    adminToken,
    request,
    userToken,
    stop: async () => {
      await host.stop();
      if (db === 'postgres' && !opts.pgSchema) await dropSchema(pgSchema);
    },
  };
}

export async function dropSchema(schema: string): Promise<void> {
  const k = knexFactory({ client: 'pg', connection: PG_URL });
  try {
    await k.raw('DROP SCHEMA IF EXISTS ?? CASCADE', [schema]);
  } finally {
    await k.destroy();
  }
}

function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const cur = out[k];
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && cur && typeof cur === 'object' ? merge(cur as Record<string, unknown>, v as Record<string, unknown>) : v;
  }
  return out;
}

/** Runs a suite once on SQLite and once on PostgreSQL. */
export function eachDatabase(title: string, fn: (db: DbKind) => void): void {
  for (const db of ['sqlite', 'postgres'] as const) {
    describe(`${title} [${db}]`, () => fn(db));
  }
}

/** A route maker that types no services, for test plugins built outside `definePlugin`. */
export const anyRoute: RouteMaker<any> = (spec) => spec;

/** A port free now (for a host that must know its own URL before it listens: a cluster's CLUSTER_URL). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}
