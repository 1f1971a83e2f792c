// The cost of crossing hosts in a cluster (issue 20): the same task driven through the host
// that runs its kernel and through a host without it that forwards each request to the first,
// and node control actions on the owner and through the other host. Two real service
// processes on PostgreSQL and Redis.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { drive, freePort, startService, type Figures, type Row } from './harness';
import type { Scenario } from './scenarios';

const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export const forwarding: Scenario = {
  name: 'cluster task forwarding (PostgreSQL, Redis)',
  selfContained: true,
  async run(): Promise<Row[]> {
    const schema = `bench_fwd_${process.pid}_${Date.now()}`;
    const admin = knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } });
    try {
      await admin.raw('select 1');
    } catch (err) {
      process.stdout.write(`cluster forwarding: skipped, ${PG_URL} does not answer (${(err as Error).message})\n`);
      await admin.destroy();
      return [];
    }
    const secret = crypto.randomBytes(32).toString('hex');
    const prefix = `pc-bench-${crypto.randomBytes(4).toString('hex')}`;
    const host = async (id: string, only: string[]) => {
      const port = await freePort();
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), `pc-bench-fwd-${id}-`)), 'config.json');
      fs.writeFileSync(file, JSON.stringify({
        database: { url: PG_URL, schema }, redis: { url: REDIS_URL }, auth: { jwtSecret: secret },
        cluster: { hostId: id, url: `http://127.0.0.1:${port}`, prefix, leaseMs: 3000 },
        mesh: { only, nodesPerKernel: 1, threadsPerNode: 2 },
        limits: { redisPrefix: prefix }, plans: { enterprise: { requestsPerMinute: 1_000_000_000 } },
      }));
      const svc = await startService({ CONFIG_FILE: file, PORT: String(port) });
      return { ...svc, url: `http://127.0.0.1:${port}` };
    };
    const runs = await host('b', ['analytics']);
    const forwards = await host('a', ['trading']);
    try {
      const login = await fetch(`${runs.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: runs.adminEmail, password: runs.adminPassword }) });
      const token = ((await login.json()) as { token: string }).token;
      // Host a must have seen b's heartbeat before it can forward.
      for (let i = 0; i < 100; i++) {
        const r = await fetch(`${forwards.url}/mesh/hosts`, { headers: { authorization: `Bearer ${token}` } });
        if (((await r.json()) as { hosts: unknown[] }).hosts.length === 2) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const load = (url: string) => ({ url: `${url}/kernels/analytics/tasks/describe`, method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ values: [1, 2, 3, 4, 5, 6, 7, 8] }) });
      await drive({ ...load(runs.url), seconds: 1 });
      await drive({ ...load(forwards.url), seconds: 1 });
      const direct = await drive(load(runs.url));
      const forwarded = await drive(load(forwards.url));
      // Control across hosts: pause and resume b's node through a (each a round trip over Redis to b).
      const nodes = (await (await fetch(`${runs.url}/mesh/nodes`, { headers: { authorization: `Bearer ${token}` } })).json()) as { nodes: Array<{ id: string; host: string }> };
      const node = nodes.nodes.find((n) => n.host === 'b')!.id;
      const control = async (via: string): Promise<Figures> => {
        const ms: number[] = [];
        for (let i = 0; i < 100; i++) {
          for (const action of ['pause', 'resume']) {
            const t0 = performance.now();
            const r = await fetch(`${via}/mesh/nodes/${node}/${action}`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
            await r.arrayBuffer();
            if (r.status !== 200) throw new Error(`control bench: ${action} answered ${r.status}`);
            ms.push(performance.now() - t0);
          }
        }
        ms.sort((x, y) => x - y);
        return { rps: ms.length / (ms.reduce((x, y) => x + y, 0) / 1000), p50: ms[ms.length >> 1]!, p99: ms[Math.floor(ms.length * 0.99)]!, non2xx: 0, errors: 0 };
      };
      const local = await control(runs.url);
      const remote = await control(forwards.url);
      return [
        { name: 'node pause/resume on its own host (200 calls)', figures: local, note: 'one at a time' },
        { name: 'node pause/resume through another host (200 calls)', figures: remote, note: `+${(remote.p50 - local.p50).toFixed(2)} ms p50 (Redis round trip to the owner)` },
        { name: 'task on the host that runs the kernel', figures: direct },
        { name: 'task forwarded by a host without it', figures: forwarded, note: `${(forwarded.rps / Math.max(1, direct.rps)).toFixed(2)}x direct; +${(forwarded.p50 - direct.p50).toFixed(0)} ms p50` },
      ];
    } finally {
      forwards.proc.kill('SIGTERM');
      runs.proc.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 500));
      await admin.raw('DROP SCHEMA IF EXISTS ?? CASCADE', [schema]).catch(() => undefined);
      await admin.destroy();
    }
  },
};
