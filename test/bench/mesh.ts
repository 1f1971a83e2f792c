// Mesh figures: the task API against a direct pool.run (one process), and a health_update
// fanned out to 1,000 WebSocket clients (server in its own process).
import { spawn } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Piscina from 'piscina';
import WebSocket from 'ws';
import { loadConfig } from '../../core/config';
import { Host } from '../../core/host';
import kernelsPlugin from '../../plugins/kernels';
import { DURATION, freePort, PROFILE_FLAGS, ROOT, type Figures, type Row } from './harness';
import { LeanClient } from './lean-client';
import { tcpFanOutFloor } from './fanout-floor';
import type { Scenario } from './scenarios';
import { bootstrapAdmin } from '../../plugins/auth/store';

function figures(samples: number[], seconds: number, failed = 0): Figures {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
  return { rps: samples.length / seconds, p50: at(50), p99: at(99), non2xx: failed, errors: 0 };
}

async function loop(seconds: number, fn: () => Promise<boolean>): Promise<{ samples: number[]; failed: number }> {
  const samples: number[] = [];
  let failed = 0;
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const t0 = performance.now();
    if (!(await fn())) failed++;
    samples.push(performance.now() - t0);
  }
  return { samples, failed };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** One way of running the task, measured in every round. */
interface Phase {
  name: string;
  call: () => Promise<boolean>;
  rounds: Figures[];
}

/**
 * Runs every phase for `seconds` in total, as `rounds` short turns taken in a rotating
 * order, so that noise on a shared machine (another process, a GC, a frequency change)
 * falls on all of them alike. Each phase's figures are the medians of its rounds.
 */
async function interleaved(phases: Phase[], seconds: number, rounds: number): Promise<Map<string, Figures>> {
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < phases.length; i++) {
      const p = phases[(i + r) % phases.length];
      const out = await loop(seconds / rounds, p.call);
      p.rounds.push(figures(out.samples, seconds / rounds, out.failed));
    }
  }
  const result = new Map<string, Figures>();
  for (const p of phases) {
    const f = p.rounds;
    result.set(p.name, { rps: median(f.map((x) => x.rps)), p50: median(f.map((x) => x.p50)), p99: median(f.map((x) => x.p99)), non2xx: f.reduce((n, x) => n + x.non2xx, 0), errors: 0 });
  }
  return result;
}

const INPUT = { values: [1, 2, 3, 4] };
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

export const taskApiVsPool: Scenario = {
  name: 'mesh task API vs direct pool.run',
  selfContained: true,
  async run(): Promise<Row[]> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-mesh-'));
    const config = loadConfig({}, { server: { port: 0, host: '127.0.0.1' }, dataDir, log: { level: 'warn' }, auth: { adminPassword: 'bench-admin-password' }, mesh: { only: ['analytics'], nodesPerKernel: 1, threadsPerNode: 1 }, plans: { enterprise: { requestsPerMinute: 1_000_000_000 } } });
    const host = new Host({ config, plugins: [kernelsPlugin] });
    await host.start();
    // Hosts without the auth plugin have no first admin: the bench makes it as the tests do.
    await bootstrapAdmin(host.services.db, config);
    const admin = await host.services.db('users').first();
    const token = host.services.auth.sign({ id: admin.id, tenantId: admin.tenant_id, role: 'admin' }).token;
    const workerFile = path.join(ROOT, 'dist', 'kernels', 'analytics', 'worker.js');
    // The same pool options as a mesh node.
    const pool = new Piscina({ filename: workerFile, name: '__ping', minThreads: 1, maxThreads: 1, concurrentTasksPerWorker: 1, atomics: 'disabled', workerData: { node_id: 'bench-1', domain: 'analytics', heartbeat_ms: 1000, settings: {} } });
    // The floor of any HTTP API over the pool: bare node:http, JSON.parse, pool.run.
    const floor = http.createServer((req, res) => {
      let text = '';
      req.on('data', (c) => (text += c));
      req.on('end', () => {
        void pool.run({ input: JSON.parse(text) }, { name: 'describe' }).then((r) => {
          const out = JSON.stringify(r);
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
          res.end(out);
        });
      });
    });
    await new Promise<void>((resolve) => floor.listen(0, '127.0.0.1', resolve));
    const floorPort = (floor.address() as { port: number }).port;
    const apiPath = '/kernels/analytics/tasks/describe';
    const body = JSON.stringify(INPUT);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    // The lean client (see lean-client.ts) writes these bytes on one keep-alive socket.
    const leanApi = new LeanClient(host.port);
    const leanFloor = new LeanClient(floorPort);
    const apiBytes = LeanClient.post(apiPath, `127.0.0.1:${host.port}`, headers, body);
    const floorBytes = LeanClient.post('/', `127.0.0.1:${floorPort}`, headers, body);
    // node:http with a keep-alive agent, for comparison with the earlier figures.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const poster = (url: string) => () =>
        new Promise<boolean>((resolve, reject) => {
          const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode === 200));
          });
          req.on('error', reject);
          req.end(body);
        });
      const phases: Phase[] = [
        { name: 'direct', call: async () => (await pool.run({ input: INPUT }, { name: 'describe' })).ok === true, rounds: [] },
        { name: 'mesh', call: async () => (await host.services.mesh.run('analytics', 'describe', INPUT), true), rounds: [] },
        { name: 'floor', call: async () => (await leanFloor.send(floorBytes)) === 200, rounds: [] },
        { name: 'api', call: async () => (await leanApi.send(apiBytes)) === 200, rounds: [] },
        { name: 'floor http', call: poster(`http://127.0.0.1:${floorPort}/`), rounds: [] },
        { name: 'api http', call: poster(`http://127.0.0.1:${host.port}${apiPath}`), rounds: [] },
      ];
      for (const p of phases) for (let i = 0; i < 300; i++) await p.call();
      const seconds = Math.max(1, DURATION / 2);
      const r = await interleaved(phases, seconds, ROUNDS);
      const [d, m, f, a, fh, ah] = ['direct', 'mesh', 'floor', 'api', 'floor http', 'api http'].map((n) => r.get(n)!);
      const over = (x: Figures) => (x.p50 - d.p50).toFixed(3);
      // The spread of the per-round overhead shows how far the medians can be trusted.
      const perRound = phases[3].rounds.map((x, i) => x.p50 - phases[0].rounds[i].p50).sort((x, y) => x - y);
      const spread = `${perRound[0].toFixed(3)}..${perRound[perRound.length - 1].toFixed(3)}`;
      const how = `medians of ${ROUNDS} interleaved rounds`;
      return [
        { name: 'analytics.describe: direct pool.run (1 client, sequential)', figures: d, note: how },
        { name: 'analytics.describe: services.mesh.run (in process)', figures: m, note: `mesh overhead p50 ${over(m)} ms (validation, routing, breaker, outcome)` },
        { name: 'analytics.describe: bare node:http + pool.run (floor, lean client)', figures: f, note: `HTTP floor p50 ${over(f)} ms: loopback and node:http server` },
        { name: 'analytics.describe: POST /kernels/{domain}/tasks/{task} (lean client)', figures: a, note: `API overhead p50 ${over(a)} ms (target <= 0.3; rounds ${spread}); ${(a.p50 - f.p50).toFixed(3)} ms above the floor` },
        { name: 'analytics.describe: floor, node:http client', figures: fh, note: `floor p50 ${over(fh)} ms with node:http's client` },
        { name: 'analytics.describe: POST task, node:http client', figures: ah, note: `API p50 ${over(ah)} ms with node:http's client; ${(ah.p50 - fh.p50).toFixed(3)} ms above its floor` },
      ];
    } finally {
      agent.destroy();
      leanApi.close();
      leanFloor.close();
      floor.close();
      await pool.destroy();
      await host.stop();
    }
  },
};

/** Clients connected for the second fan-out figure (issue 22: 10,000); the first stays at 1,000. */
const STREAM_CLIENTS = Number(process.env.BENCH_STREAM_CLIENTS ?? 10_000);

const HEALTH_UPDATE = '"health_update"';

export const healthFanOut: Scenario = {
  name: 'health_update fan-out to 1,000 and 10,000 WebSocket clients',
  selfContained: true,
  async run(): Promise<Row[]> {
    const rows = await webSocketRows();
    // The WebSocket clients' sockets close first: both crowds at once would pass `ulimit -n`.
    await new Promise((r) => setTimeout(r, 500));
    rows.push(await tcpFanOutFloor(STREAM_CLIENTS, 20, figures));
    return rows;
  },
};

/** The hub server in its own process, 1,000 then STREAM_CLIENTS clients, and its memory. */
async function webSocketRows(): Promise<Row[]> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['--expose-gc', ...PROFILE_FLAGS, path.join(ROOT, 'dist', 'test', 'bench', 'servers', 'hub.js')], { env: { ...process.env, PORT: String(port) }, stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += String(d)));
  /** Sends a command to the server and resolves with the first new line matching `re`. */
  const ask = (cmd: string, re: RegExp) => new Promise<RegExpExecArray>((resolve, reject) => {
    const from = out.length;
    const timer = setTimeout(() => reject(new Error(`hub server: no answer to ${cmd}`)), 30_000);
    const check = () => {
      const m = re.exec(out.slice(from));
      if (!m) return;
      clearTimeout(timer);
      proc.stdout.off('data', check);
      resolve(m);
    };
    proc.stdout.on('data', check);
    proc.stdin.write(`${cmd}\n`);
  });
  const clients: WebSocket[] = [];
  // Arrival time and frame of each health_update; parsed once a round is over, so that the
  // load generator's own JSON work does not hold back the next socket's message (with
  // 10,000 clients it shares the 2 cores with the server's send loop).
  let arrivals: Array<{ at: number; raw: Buffer }> = [];
  try {
    const token = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`hub server did not start: ${out}`)), 30_000);
      proc.stdout.on('data', () => {
        const m = /ready (\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
    });
    const connect = async (upTo: number) => {
      while (clients.length < upTo) {
        const batch = Math.min(100, upTo - clients.length);
        await Promise.all(
          Array.from({ length: batch }, () => new Promise<void>((resolve, reject) => {
            const ws = new WebSocket(`ws://127.0.0.1:${port}/ops/stream?token=${token}`);
            ws.on('message', (raw) => {
              const at = performance.timeOrigin + performance.now();
              if ((raw as Buffer).includes(HEALTH_UPDATE)) arrivals.push({ at, raw: raw as Buffer });
            });
            ws.once('open', () => {
              clients.push(ws);
              resolve();
            });
            ws.once('error', reject);
          })),
        );
      }
    };
    const fanOut = async (n: number, target: number): Promise<Row> => {
      arrivals = [];
      const firedFrom = out.length;
      const events = 20;
      const t0 = performance.now();
      for (let i = 0; i < events; i++) {
        proc.stdin.write('fire\n');
        // Each event is delivered to every client before the next one is sent.
        const end = Date.now() + 5000;
        while (arrivals.length < (i + 1) * n && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
        await new Promise((r) => setTimeout(r, 50));
      }
      const seconds = (performance.now() - t0) / 1000;
      const latencies: number[] = [];
      for (const { at, raw } of arrivals) {
        const m = JSON.parse(raw.toString('utf8')) as { type: string; data: { sent_at?: number } };
        if (m.type === 'health_update' && m.data.sent_at) latencies.push(at - m.data.sent_at);
      }
      const f = figures(latencies, seconds, events * n - latencies.length);
      const loops = [...out.slice(firedFrom).matchAll(/fired (\S+)/g)].map((m) => Number(m[1])).sort((a, b) => a - b);
      const server = loops.length ? `; server send loop p50 ${loops[loops.length >> 1].toFixed(1)} ms, max ${loops[loops.length - 1].toFixed(1)} ms` : '';
      return { name: `health_update to ${n} WS clients (${events} events)`, figures: f, note: `delivered ${latencies.length}/${events * n}; p99 target <= ${target} ms${server}` };
    };
    const memory = async () => {
      const m = await ask('memory', /memory (\d+) (\d+) (\d+)/);
      return { clients: Number(m[1]), rss: Number(m[2]), heap: Number(m[3]) };
    };
    const idle = await memory();
    await connect(1000);
    const rows = [await fanOut(1000, 50)];
    await connect(STREAM_CLIENTS);
    const full = await memory();
    if (full.clients !== STREAM_CLIENTS) throw new Error(`hub bench: the server holds ${full.clients} clients, not ${STREAM_CLIENTS}`);
    rows.push(await fanOut(STREAM_CLIENTS, 100));
    const per = (a: number, b: number) => ((b - a) / STREAM_CLIENTS / 1024).toFixed(1);
    rows.push({
      name: `memory per idle stream client (${STREAM_CLIENTS} connected)`,
      figures: { rps: 0, p50: 0, p99: 0, non2xx: 0, errors: 0 },
      note: `RSS ${per(idle.rss, full.rss)} KiB, JS heap and buffers ${per(idle.heap, full.heap)} KiB a client (after a GC; RSS ${(full.rss / 2 ** 20).toFixed(0)} MiB in all)`,
    });
    return rows;
  } finally {
    for (const ws of clients) ws.terminate();
    proc.kill('SIGTERM');
  }
}
