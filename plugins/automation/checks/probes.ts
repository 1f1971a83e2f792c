import crypto from 'node:crypto';
import net from 'node:net';
import type { Config } from '../../../core/config';
import { nowIso, type Db } from '../../../core/db';
import type { HealthRegistry } from '../../../core/health';
import type { Mesh } from '../../../core/mesh/mesh';
import { verifyTls } from '../https/verify';

export interface Target {
  name: string;
  kind: 'http' | 'tcp' | 'tls' | 'kernel' | 'database' | 'redis';
  url?: string;
  host?: string;
  port?: number;
  domain?: string;
}

export interface ProbeResult {
  target: string;
  kind: Target['kind'];
  ok: boolean;
  latency_ms: number | null;
  detail: Record<string, unknown>;
  checked_at: string;
}

const ms = (t0: number) => Math.round((performance.now() - t0) * 1000) / 1000;

/** Real probes: an HTTP GET, a TCP connect, a TLS handshake, a kernel ping, the database and Redis. */
export class Probes {
  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly mesh: Mesh,
    private readonly health: HealthRegistry,
    private readonly localCa: () => Promise<string>,
  ) {}

  /** The configured targets plus the database, Redis (when set) and every kernel. */
  defaultTargets(): Target[] {
    const out: Target[] = [{ name: 'database', kind: 'database' }];
    if (this.config.redis.url) out.push({ name: 'redis', kind: 'redis' });
    for (const k of this.mesh.kernels()) out.push({ name: `kernel:${k.id}`, kind: 'kernel', domain: k.id });
    return [...out, ...this.config.automation.healthTargets];
  }

  async run(targets: Target[]): Promise<ProbeResult[]> {
    const results = await Promise.all(targets.map((t) => this.one(t)));
    if (results.length) {
      await this.db('automation_health_results').insert(
        results.map((r) => ({ id: crypto.randomUUID(), target: r.target, kind: r.kind, ok: r.ok, latency_ms: r.latency_ms, detail: JSON.stringify(r.detail), checked_at: r.checked_at })),
      );
    }
    return results;
  }

  private async one(t: Target): Promise<ProbeResult> {
    const timeout = this.config.automation.probeTimeoutMs;
    const base = { target: t.name, kind: t.kind, checked_at: nowIso() };
    const t0 = performance.now();
    try {
      switch (t.kind) {
        case 'database':
        case 'redis': {
          const h = await this.health.check(t.kind);
          return { ...base, ok: h?.status === 'healthy', latency_ms: ms(t0), detail: { status: h?.status ?? 'unknown', ...(h?.detail ?? {}) } };
        }
        case 'kernel': {
          const r = await this.mesh.ping(t.domain!, timeout);
          return { ...base, ok: r.ok, latency_ms: r.latency_ms, detail: { node_id: r.node_id, thread_id: r.thread_id, reason: r.reason } };
        }
        case 'http': {
          const res = await fetch(t.url!, { signal: AbortSignal.timeout(timeout), redirect: 'manual' });
          await res.arrayBuffer();
          return { ...base, ok: res.status < 400, latency_ms: ms(t0), detail: { status: res.status, url: t.url } };
        }
        case 'tcp': {
          await new Promise<void>((resolve, reject) => {
            const s = net.connect({ host: t.host!, port: t.port!, timeout });
            s.once('connect', () => (s.destroy(), resolve()));
            s.once('timeout', () => (s.destroy(), reject(new Error(`no connection within ${timeout} ms`))));
            s.once('error', reject);
          });
          return { ...base, ok: true, latency_ms: ms(t0), detail: { host: t.host, port: t.port } };
        }
        case 'tls': {
          const r = await verifyTls({ host: t.host!, port: t.port! }, [await this.localCa()], timeout, new Date());
          return { ...base, ok: r.ok && r.authorized, latency_ms: r.handshake_ms, detail: { protocol: r.protocol, authorized: r.authorized, authorization_error: r.authorization_error, days_left: r.days_left, error: r.error } };
        }
      }
    } catch (err) {
      return { ...base, ok: false, latency_ms: null, detail: { error: (err as Error).message } };
    }
  }

  /** The latest result of every target probed so far. */
  async latest(): Promise<ProbeResult[]> {
    const newest = this.db('automation_health_results').select('target').max('checked_at as at').groupBy('target').as('n');
    const rows = await this.db('automation_health_results as r').join(newest, (j) => j.on('r.target', 'n.target').andOn('r.checked_at', 'n.at')).select('r.*').orderBy('r.target');
    const seen = new Set<string>();
    const out: ProbeResult[] = [];
    for (const r of rows) {
      if (seen.has(r.target)) continue;
      seen.add(r.target);
      out.push({ target: r.target, kind: r.kind, ok: !!r.ok, latency_ms: r.latency_ms === null ? null : Number(r.latency_ms), detail: JSON.parse(r.detail), checked_at: r.checked_at });
    }
    return out;
  }
}
