// Auth and rate-limit figures: an authenticated GET through the whole pipeline, the 429
// path, and the cost of the rate-limit check itself, timed in process.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Request, Response } from 'express';
import { loadConfig } from '../../core/config';
import { TooManyRequests } from '../../core/errors';
import { createLogger } from '../../core/logger';
import { RateLimiter } from '../../core/limits';
import type { RouteDef } from '../../core/plugin';
import { drive, startService, type Figures, type Row } from './harness';
import type { Scenario } from './scenarios';

async function post(url: string, body: unknown, token?: string) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Times `n` calls of the limiter's pipeline hook; figures in ms. */
async function timeHook(limiter: RateLimiter, tenantId: string, n: number, expectRefusal: boolean): Promise<Figures> {
  const headers: Record<string, string> = {};
  const res = { setHeader: (k: string, v: string) => (headers[k] = v) } as unknown as Response;
  const req = { ip: '127.0.0.1', socket: {}, headers: {} } as unknown as Request;
  const route = { access: 'viewer' } as RouteDef;
  const caller = { kind: 'user' as const, id: 'bench', tenantId, role: 'viewer' as const };
  const times: number[] = [];
  let refused = 0;
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    try {
      await limiter.hook(req, res, route, caller);
    } catch (err) {
      // Only a refusal counts as one: any other error is the bench's fault, not a figure.
      if (!(err instanceof TooManyRequests)) throw err;
      refused++;
    }
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  if (expectRefusal !== refused > n / 2) throw new Error(`rate-limit bench: expected ${expectRefusal ? 'refusals' : 'passes'}, got ${refused}/${n} refused`);
  times.sort((a, b) => a - b);
  const mean = times.reduce((s, x) => s + x, 0) / n;
  return { rps: 1000 / mean, p50: times[n >> 1], p99: times[Math.floor(n * 0.99)], non2xx: 0, errors: 0 };
}

async function checkCost(redisUrl: string | undefined): Promise<Row[]> {
  const config = loadConfig({}, {
    log: { level: 'silent' },
    redis: redisUrl ? { url: redisUrl } : {},
    plans: { bench: { requestsPerMinute: 1_000_000_000 } },
    limits: { redisPrefix: `pc-bench-${process.pid}-${Date.now()}` },
  });
  const limiter = new RateLimiter(config, async (id) => (id === 'free-tenant' ? 'free' : 'bench'), createLogger('silent'));
  try {
    if (redisUrl && !(await limiter.ready(2000))) return [];
    const where = redisUrl ? 'Redis' : 'local store';
    await timeHook(limiter, 'bench-tenant', 200, false); // warm-up
    const pass = await timeHook(limiter, 'bench-tenant', 20_000, false);
    await timeHook(limiter, 'free-tenant', 10, false); // spend the free budget
    const refuse = await timeHook(limiter, 'free-tenant', 20_000, true);
    const note = 'in process: one hook call; req/s column = calls/s';
    return [
      { name: `rate-limit check, allowed (${where})`, figures: pass, note, vsExpress: undefined, vsRaw: undefined },
      { name: `rate-limit check, refused (${where})`, figures: refuse, note, vsExpress: undefined, vsRaw: undefined },
    ];
  } finally {
    await limiter.close();
  }
}

export const authScenario: Scenario = {
  name: 'auth and rate limits',
  async run() {
    // A service of its own, with a plan whose budget does not bind.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-auth-'));
    const file = path.join(dir, 'config.json');
    fs.writeFileSync(file, JSON.stringify({ plans: { bench: { requestsPerMinute: 1_000_000_000 } }, limits: { clientAddressPerWindow: 1000 } }));
    const svc = await startService({ CONFIG_FILE: file });
    try {
      const login = await post(`${svc.url}/auth/login`, { email: svc.adminEmail, password: svc.adminPassword });
      const admin = login.token as string;
      await post(`${svc.url}/billing/assign-plan`, { tenant_id: 'platform', plan: 'bench' }, admin);
      // A self-registered user: its own tenant on the free plan (10 a minute), soon spent.
      await post(`${svc.url}/auth/register`, { email: 'bench-free@example.org', password: 'bench-password-1', name: 'Bench' });
      const free = (await post(`${svc.url}/auth/login`, { email: 'bench-free@example.org', password: 'bench-password-1' })).token as string;
      const rows: Row[] = [
        {
          name: 'GET /auth/me, authenticated (full pipeline)',
          figures: await drive({ url: `${svc.url}/auth/me`, headers: { authorization: `Bearer ${admin}` } }),
          note: 'JWT + revocation + rate limit (plan "bench") + 1 SQLite read',
        },
        {
          name: 'GET /auth/verify, authenticated, no DB',
          figures: await drive({ url: `${svc.url}/auth/verify?token=${admin}`, headers: { authorization: `Bearer ${admin}` } }),
          note: 'JWT + revocation + rate limit (plan "bench"); no database',
        },
        {
          name: 'GET /auth/me over budget (429 path)',
          figures: await drive({ url: `${svc.url}/auth/me`, headers: { authorization: `Bearer ${free}` } }),
          note: 'free plan spent: every answer is 429',
        },
      ];
      rows.push(...(await checkCost(undefined)));
      rows.push(...(await checkCost(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379').catch(() => [])));
      return rows;
    } finally {
      svc.proc.kill('SIGTERM');
    }
  },
};
