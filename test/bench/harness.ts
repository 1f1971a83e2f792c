import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..', '..');
export const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);

export interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Starts a node script and waits until it prints `wait` on stdout. */
export async function startProcess(script: string, env: Record<string, string>, wait = 'ready', nodeFlags: string[] = []): Promise<{ proc: ChildProcess; output: () => string }> {
  const proc = spawn(process.execPath, [...nodeFlags, script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += String(d)));
  proc.stderr.on('data', (d) => (out += String(d)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start:\n${out}`)), 30_000);
    const check = () => {
      if (out.includes(wait)) {
        clearTimeout(timer);
        resolve();
      }
    };
    proc.stdout.on('data', check);
    proc.on('exit', (code) => reject(new Error(`${script} exited with ${code}:\n${out}`)));
  });
  return { proc, output: () => out };
}

/**
 * BENCH_CPU_PROF=dir: the servers a bench starts write a CPU profile there when they stop
 * (open it in Chrome DevTools or speedscope; docs/benchmarks.md).
 */
export const PROFILE_FLAGS = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];

/** The service runs with the node flags `make run` gives it (see the Makefile). */
const SERVICE_NODE_FLAGS = ['--max-semi-space-size=64', ...PROFILE_FLAGS];

/**
 * The real service on a fresh SQLite file; resolves with its URL and the admin password.
 * Unless a CONFIG_FILE is given, the admin's plan (enterprise) gets a budget that does not
 * bind, so that figures measure the pipeline rather than the 429 path.
 */
export async function startService(extraEnv: Record<string, string> = {}, extraFlags: string[] = []) {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-'));
  const configFile = path.join(dataDir, 'bench-config.json');
  fs.writeFileSync(configFile, JSON.stringify({ plans: { enterprise: { requestsPerMinute: 1_000_000_000 } } }));
  const started = await startProcess(path.join(ROOT, 'dist', 'core', 'main.js'), {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ADMIN_PASSWORD: 'bench-admin-password',
    CONFIG_FILE: configFile,
    ...extraEnv,
  }, 'listening on', [...SERVICE_NODE_FLAGS, ...extraFlags]);
  return { ...started, url: `http://127.0.0.1:${port}`, dataDir, adminEmail: 'admin@example.com', adminPassword: 'bench-admin-password' };
}

export async function startBaseline(kind: 'raw' | 'express') {
  const port = await freePort();
  const started = await startProcess(path.join(ROOT, 'dist', 'test', 'bench', 'servers', `${kind}.js`), { PORT: String(port) });
  return { ...started, url: `http://127.0.0.1:${port}` };
}

/** CPU seconds (user + system, every thread) a process has used so far, from /proc. */
export function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after its closing ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
  return ticks / CLOCK_TICKS;
}
// Linux reports CPU time in USER_HZ ticks, 100 a second on every architecture Node runs on here.
const CLOCK_TICKS = 100;

/** Drives a load and also measures the server's CPU time per answered request (microseconds). */
export async function driveWithCpu(load: Load, pid: number): Promise<Figures & { cpuUsPerRequest: number }> {
  const before = cpuSeconds(pid);
  const f = await drive(load);
  const used = cpuSeconds(pid) - before;
  const answered = f.rps * (load.seconds ?? DURATION);
  return { ...f, cpuUsPerRequest: answered > 0 ? (used * 1e6) / answered : 0 };
}

export interface Load {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** A file holding the body (for bodies too large for a command line). */
  bodyFile?: string;
  connections?: number;
  seconds?: number;
}

/** Drives one URL with autocannon in its own process; returns its figures. */
export async function drive(load: Load): Promise<Figures> {
  const bin = path.join(ROOT, 'node_modules', 'autocannon', 'autocannon.js');
  const args = [bin, '--json', '-c', String(load.connections ?? CONNECTIONS), '-d', String(load.seconds ?? DURATION), '-m', load.method ?? 'GET'];
  for (const [k, v] of Object.entries(load.headers ?? {})) args.push('-H', `${k}=${v}`);
  if (load.body) args.push('-b', load.body);
  if (load.bodyFile) args.push('-i', load.bodyFile);
  args.push(load.url);
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += String(d)));
  await new Promise((resolve) => proc.on('exit', resolve));
  const r = JSON.parse(out) as { requests: { average: number }; latency: { p50: number; p99: number }; non2xx: number; errors: number };
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}

export interface Row {
  name: string;
  figures: Figures;
  /** Figures of the baselines measured in the same run, for the ratio columns. */
  vsExpress?: Figures;
  vsRaw?: Figures;
  note?: string;
}

const fmt = (n: number, d = 0) => n.toFixed(d);

export function printTable(rows: Row[]): void {
  const head = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'x express', 'x raw', 'note'];
  const lines = rows.map((r) => [
    r.name,
    fmt(r.figures.rps),
    fmt(r.figures.p50, 2),
    fmt(r.figures.p99, 2),
    String(r.figures.non2xx + r.figures.errors),
    r.vsExpress ? fmt(r.figures.rps / r.vsExpress.rps, 2) : '',
    r.vsRaw ? fmt(r.figures.rps / r.vsRaw.rps, 2) : '',
    r.note ?? '',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const show = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  process.stdout.write(`${show(head)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n`);
  for (const l of lines) process.stdout.write(`${show(l)}\n`);
}

/** `clients` loops calling `fn` for `seconds`; calls/s and latency percentiles (ms). */
export async function concurrent(clients: number, seconds: number, fn: () => Promise<unknown>): Promise<Figures> {
  const samples: number[] = [];
  const end = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      await fn();
      samples.push(performance.now() - t0);
    }
  }));
  samples.sort((a, b) => a - b);
  const at = (p: number) => samples[Math.min(samples.length - 1, Math.floor(p * samples.length))] ?? 0;
  return { rps: samples.length / seconds, p50: at(0.5), p99: at(0.99), non2xx: 0, errors: 0 };
}
