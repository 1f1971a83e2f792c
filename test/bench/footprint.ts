// Memory the service needs per kernel node, per stream client and per million stored
// events, measured on a fresh service (printed by `make soak` before its load).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { startService } from './harness';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

async function heap(url: string): Promise<number> {
  const text = await fetch(`${url}/metrics/`).then((r) => r.text());
  let total = 0;
  for (const line of text.split('\n')) if (line.startsWith('v8js_memory_heap_used{')) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  return total;
}

/** RSS after the process settles: the lowest of a few readings a second apart. */
async function settledRss(pid: number): Promise<number> {
  let low = Infinity;
  for (let i = 0; i < 4; i++) {
    await sleep(1000);
    low = Math.min(low, rss(pid));
  }
  return low;
}

function dirBytes(dir: string): number {
  return fs.readdirSync(dir).filter((f) => f.endsWith('.sqlite') || f.endsWith('.sqlite-wal')).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
}

const MB = 2 ** 20;

export async function footprint(out: (line: string) => void): Promise<void> {
  const svc = await startService();
  try {
    const pid = svc.proc.pid!;
    const login = await fetch(`${svc.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: svc.adminEmail, password: svc.adminPassword }) });
    const { token } = (await login.json()) as { token: string };
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const base = await settledRss(pid);
    out(`footprint: fresh service RSS ${(base / MB).toFixed(1)} MB (3 kernels x 2 single-thread nodes)\n`);

    const NODES = 4;
    for (let i = 0; i < NODES; i++) {
      const r = await fetch(`${svc.url}/mesh/nodes`, { method: 'POST', headers: auth, body: JSON.stringify({ kernel_id: 'analytics' }) });
      if (r.status !== 201) throw new Error(`adding a node answered ${r.status}`);
    }
    const withNodes = await settledRss(pid);
    out(`  per kernel node (1 thread): ${((withNodes - base) / NODES / MB).toFixed(1)} MB RSS (${NODES} analytics nodes added)\n`);

    const CLIENTS = 1000;
    const heapBefore = await heap(svc.url);
    const rssBefore = await settledRss(pid);
    const sockets: WebSocket[] = [];
    await Promise.all(
      Array.from({ length: CLIENTS }, () =>
        new Promise<void>((resolve) => {
          const ws = new WebSocket(`${svc.url.replace('http', 'ws')}/ops/stream?token=${token}`);
          ws.on('message', () => resolve());
          ws.on('error', () => resolve());
          sockets.push(ws);
        }),
      ),
    );
    const rssClients = await settledRss(pid);
    const heapClients = await heap(svc.url);
    out(`  per idle /ops/stream client: ${((rssClients - rssBefore) / CLIENTS / 1024).toFixed(1)} KB RSS, ${((heapClients - heapBefore) / CLIENTS / 1024).toFixed(1)} KB heap (${CLIENTS} clients)\n`);
    for (const ws of sockets) ws.terminate();

    const EVENTS = 200_000;
    const diskBefore = dirBytes(svc.dataDir);
    const rssEventsBefore = await settledRss(pid);
    for (let sent = 0; sent < EVENTS; sent += 500) {
      const events = Array.from({ length: 500 }, (_, i) => ({
        trace_id: crypto.randomBytes(16).toString('hex'),
        span_id: crypto.randomBytes(8).toString('hex'),
        provider: 'openai',
        request_model: i % 2 ? 'gpt-4o' : 'gpt-4o-mini',
        input_tokens: 100 + i,
        output_tokens: 20,
        duration_ms: 200 + i,
        attributes: { 'app.feature': 'footprint' },
      }));
      const r = await fetch(`${svc.url}/observability/v1/ingest/llm-call`, { method: 'POST', headers: auth, body: JSON.stringify({ events }) });
      if (r.status !== 202) throw new Error(`ingest answered ${r.status}`);
    }
    const disk = dirBytes(svc.dataDir) - diskBefore;
    const rssEvents = await settledRss(pid);
    out(`  per million stored llm-call events: ${((disk / EVENTS) * 1e6 / MB).toFixed(0)} MB on disk (SQLite file + WAL); RSS ${((rssEvents - rssEventsBefore) / MB).toFixed(1)} MB higher after ${EVENTS / 1000}k events, a plateau (page cache <= 32 MB, young generation), not a cost per event\n`);
  } finally {
    svc.proc.kill('SIGTERM');
  }
}
