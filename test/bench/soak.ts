// `make soak`: a steady mixed load on the real service for SOAK_SECONDS (default 600), with
// the service's heap and RSS sampled each minute, and the trend after warm-up. Not part of
// `make test`. The load: reads (/kernels/, /auth/me, /ops/actions/history?limit=20), analytics
// tasks, 50-event ingest batches, at SOAK_RPS requests a second (default 400), and
// SOAK_STREAMS (default 50) /ops/stream clients.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import WebSocket from 'ws';
import { footprint } from './footprint';
import { startService } from './harness';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const RPS = Number(process.env.SOAK_RPS ?? 400);
const STREAMS = Number(process.env.SOAK_STREAMS ?? 50);
const SAMPLE_MS = Number(process.env.SOAK_SAMPLE_MS ?? 60_000);
// RSS is read every PROBE_MS and a sample is the lowest reading of its period. The heap
// figure is the live heap after the last full (mark-compact) collection of the period, which
// the service prints with --trace-gc: any single reading mostly says where the GC cycle was.
const PROBE_MS = 5_000;
// Worker threads' isolates print their collections too: lines start with `[pid:isolate]`, and
// the main isolate is the one of the first line (it collects while loading, before any worker).
const MARK_COMPACT = /\[\d+:(0x[0-9a-f]+)\][^\n]*?Mark-Compact[^\n]*?->\s*([\d.]+)\s*\(/g;
const ISOLATE = /\[\d+:(0x[0-9a-f]+)\]/;
// The young generation grows to its full size (2 x --max-semi-space-size) in the first minutes.
const WARMUP_MS = Number(process.env.SOAK_WARMUP_MS ?? 180_000);

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

function call(url: string, method: string, headers: Record<string, string>, body?: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(url, { method, headers: body ? { ...headers, 'content-length': String(Buffer.byteLength(body)) } : headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

function ingestBatch(n: number): string {
  const events = [];
  for (let i = 0; i < n; i++) {
    events.push({
      trace_id: crypto.randomBytes(16).toString('hex'),
      span_id: crypto.randomBytes(8).toString('hex'),
      provider: 'openai',
      request_model: i % 2 ? 'gpt-4o' : 'gpt-4o-mini',
      input_tokens: 100 + i,
      output_tokens: 20,
      duration_ms: 200 + i,
    });
  }
  return JSON.stringify({ events });
}

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

async function main(): Promise<void> {
  if (process.env.SOAK_FOOTPRINT !== '0') await footprint((l) => process.stdout.write(l));
  const svc = await startService({}, ['--trace-gc']);
  const stop = () => svc.proc.kill('SIGTERM');
  try {
    const login = await fetch(`${svc.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: svc.adminEmail, password: svc.adminPassword }) });
    const { token } = (await login.json()) as { token: string };
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const batch = ingestBatch(50);
    const mix: Array<() => Promise<number>> = [
      () => call(`${svc.url}/kernels/`, 'GET', auth),
      () => call(`${svc.url}/auth/me`, 'GET', auth),
      () => call(`${svc.url}/ops/actions/history?limit=20`, 'GET', auth),
      () => call(`${svc.url}/kernels/analytics/tasks/describe`, 'POST', auth, JSON.stringify({ values: [1, 2, 3, 4, 5, 6, 7, 8] })),
      () => call(`${svc.url}/observability/v1/ingest/llm-call`, 'POST', auth, batch),
    ];
    const NAMES = ['GET /kernels/', 'GET /auth/me', 'GET /ops/actions/history', 'POST analytics.describe', 'POST ingest'];
    const sockets: WebSocket[] = [];
    for (let i = 0; i < STREAMS; i++) {
      const ws = new WebSocket(`${svc.url.replace('http', 'ws')}/ops/stream?token=${token}`);
      ws.on('error', () => undefined);
      ws.on('message', () => undefined);
      sockets.push(ws);
    }
    process.stdout.write(`soak: ${SECONDS} s at ${RPS} req/s over ${mix.length} routes, ${STREAMS} stream clients; sampling every ${SAMPLE_MS / 1000} s\n`);
    process.stdout.write('minute  heap MB   rss MB   requests  errors   (heap: live after the last full GC of the period, - if none; rss: lowest reading)\n');
    const started = Date.now();
    let sent = 0;
    let failed = 0;
    let inFlight = 0;
    // Refusals by route and status (0: no answer), so a failure says what it was.
    const statuses = new Map<string, number>();
    const samples: Array<{ t: number; heap: number; rss: number }> = [];
    let low = { heap: NaN, rss: Infinity };
    let seen = 0;
    let mainIsolate: string | null = null;
    const probe = async () => {
      const out = svc.output();
      mainIsolate ??= ISOLATE.exec(out)?.[1] ?? null;
      for (const m of out.slice(seen).matchAll(MARK_COMPACT)) if (m[1] === mainIsolate) low.heap = Number(m[2]) * 2 ** 20;
      seen = out.length;
      low.rss = Math.min(low.rss, rssBytes(svc.proc.pid!));
    };
    const prober = setInterval(() => void probe().catch(() => undefined), PROBE_MS);
    const sample = async () => {
      await probe();
      const s = { t: Date.now() - started, ...low };
      low = { heap: NaN, rss: Infinity };
      samples.push(s);
      process.stdout.write(`${(s.t / 60_000).toFixed(1).padStart(6)}  ${(Number.isFinite(s.heap) ? (s.heap / 2 ** 20).toFixed(1) : '-').padStart(7)}  ${(s.rss / 2 ** 20).toFixed(1).padStart(7)}  ${String(sent).padStart(9)}  ${String(failed).padStart(6)}\n`);
    };
    const sampler = setInterval(() => void sample(), SAMPLE_MS);
    // A steady rate: each tick sends what the elapsed time owes, bounded by 256 in flight.
    await new Promise<void>((resolve) => {
      const tick = setInterval(() => {
        const elapsed = Date.now() - started;
        if (elapsed >= SECONDS * 1000) {
          clearInterval(tick);
          resolve();
          return;
        }
        const owed = Math.floor((elapsed / 1000) * RPS) - sent;
        for (let i = 0; i < owed && inFlight < 256; i++) {
          const idx = sent % mix.length;
          const fn = mix[idx];
          sent++;
          inFlight++;
          void fn().then((status) => {
            inFlight--;
            if (status < 200 || status >= 300) {
              failed++;
              const key = `${NAMES[idx]} ${status}`;
              statuses.set(key, (statuses.get(key) ?? 0) + 1);
            }
          });
        }
      }, 10);
    });
    clearInterval(sampler);
    clearInterval(prober);
    await sample();
    for (const ws of sockets) ws.close();
    const after = samples.filter((s) => s.t >= WARMUP_MS);
    if (after.length >= 2) {
      const mins = after.map((s) => s.t / 60_000);
      const withHeap = after.filter((s) => Number.isFinite(s.heap));
      const heapSlope = withHeap.length >= 2 ? slope(withHeap.map((s) => s.t / 60_000), withHeap.map((s) => s.heap / 2 ** 20)) : NaN;
      const rssSlope = slope(mins, after.map((s) => s.rss / 2 ** 20));
      process.stdout.write(`\nafter ${WARMUP_MS / 1000} s warm-up (${after.length} samples): heap ${heapSlope.toFixed(2)} MB/min (target <= 1), rss ${rssSlope.toFixed(2)} MB/min (target <= 2)\n`);
    } else {
      process.stdout.write('\nnot enough samples after the warm-up for a trend (raise SOAK_SECONDS)\n');
    }
    process.stdout.write(`${sent} requests, ${failed} not 2xx${failed ? `: ${[...statuses].map(([k, n]) => `${k} x${n}`).join(', ')}` : ''}\n`);
  } finally {
    stop();
    agent.destroy();
  }
}

main().catch((err) => {
  process.stderr.write(`soak failed: ${(err as Error).stack}\n`);
  process.exit(1);
});
