import path from 'node:path';
import WebSocket from 'ws';
import kernelsPlugin from '../../plugins/kernels';
import meshPlugin from '../../plugins/mesh';
import opsMeshPlugin from '../../plugins/ops-mesh';
import healthPlugin from '../../plugins/health';
import { startHost, type DbKind, type TestHost } from '../helpers/host';

export const BUILTIN_KERNELS = path.resolve(__dirname, '..', '..', 'kernels');
export const FIXTURE_KERNELS = path.resolve(__dirname, '..', 'fixtures', 'kernels');
export const MESH_PLUGINS = [kernelsPlugin, meshPlugin, opsMeshPlugin, healthPlugin];

/** A host with the mesh plugins and only the kernels named (fixtures included), fast heartbeats. */
export function startMeshHost(only: string[], mesh: Record<string, unknown> = {}, db: DbKind = 'sqlite', extra: Record<string, unknown> = {}): Promise<TestHost> {
  return startHost({
    db,
    plugins: MESH_PLUGINS,
    config: { mesh: { kernelDirs: [BUILTIN_KERNELS, FIXTURE_KERNELS], only, heartbeatMs: 100, noNodeWaitMs: 300, ...mesh }, ...extra },
  });
}

export interface Stream {
  ws: WebSocket;
  messages: Array<{ type: string; timestamp: string; data: any; origin?: string; seq?: number }>;
  /** Resolves with the first message (seen or future) that matches, or rejects after ms. */
  next(pred: (m: { type: string; data: any }) => boolean, ms?: number): Promise<{ type: string; timestamp: string; data: any; origin?: string; seq?: number }>;
  send(v: unknown): void;
  close(): Promise<void>;
}

export function openStream(t: TestHost, token: string | null, via: 'query' | 'header' = 'query'): Promise<Stream> {
  const base = t.url.replace('http', 'ws') + '/ops/stream';
  const ws = via === 'query' && token ? new WebSocket(`${base}?token=${token}`) : new WebSocket(base, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const messages: Stream['messages'] = [];
  const waiters = new Set<() => void>();
  ws.on('message', (raw) => {
    messages.push(JSON.parse((raw as Buffer).toString('utf8')));
    for (const w of [...waiters]) w();
  });
  const stream: Stream = {
    ws,
    messages,
    next: (pred, ms = 5000) =>
      new Promise((resolve, reject) => {
        let seen = 0;
        const check = () => {
          for (; seen < messages.length; seen++) {
            if (pred(messages[seen])) {
              waiters.delete(check);
              clearTimeout(timer);
              return resolve(messages[seen]);
            }
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching message within ${ms} ms; got ${messages.map((m) => m.type).join(', ')}`));
        }, ms);
        waiters.add(check);
        check();
      }),
    send: (v) => ws.send(typeof v === 'string' ? v : JSON.stringify(v)),
    close: () =>
      new Promise((resolve) => {
        if (ws.readyState === ws.CLOSED) return resolve();
        ws.once('close', () => resolve());
        ws.terminate();
      }),
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(stream));
    ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode })));
    ws.once('error', reject);
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

