// Task forwarding across the hosts of a cluster (docs/scale-out.md): a host with no active
// node of a kernel sends the task to the least-loaded live host that has one, over HTTP with
// the caller's own credentials, and relays the answer. The forwarded request carries a proof
// (an HMAC under the shared token secret) that a peer sent it: the receiving host does not
// forward it again and does not take the tenant's rate-limit budget a second time.
import crypto from 'node:crypto';
import http from 'node:http';
import type { KeyObject } from 'node:crypto';
import type { Request } from 'express';
import type { NodeView } from '../mesh/types';

export const FORWARDED_HEADER = 'x-pc-forwarded';

export interface PeerHost {
  host_id: string;
  url: string | null;
  live: boolean;
}

export interface Relayed {
  status: number;
  body: unknown;
  host_id: string;
  retryAfter: string | null;
}

export class TaskForwarder {
  private readonly key: Buffer;
  // Kept-alive connections to the peers: node:http costs a fraction of fetch per request here.
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

  constructor(
    private readonly hostId: string,
    secret: KeyObject,
    private readonly hosts: () => PeerHost[],
    private readonly remoteNodes: () => NodeView[],
    private readonly timeoutMs: number,
  ) {
    this.key = crypto.createHash('sha256').update('platform-control cluster forward v1').update(secret.export()).digest();
  }

  private sign(requestId: string, at: number): string {
    return crypto.createHmac('sha256', this.key).update(`${this.hostId}|${requestId}|${at}`).digest('base64url');
  }

  /** True when a peer of this cluster sent this request (a valid proof less than a minute old). */
  fromPeer(req: Request): boolean {
    const v = req.headers[FORWARDED_HEADER];
    if (typeof v !== 'string') return false;
    const [host, requestId, at, mac] = v.split(' ');
    if (!host || !requestId || !at || !mac || Math.abs(Date.now() - Number(at)) > 60_000) return false;
    const want = crypto.createHmac('sha256', this.key).update(`${host}|${requestId}|${at}`).digest();
    const got = Buffer.from(mac, 'base64url');
    return got.length === want.length && crypto.timingSafeEqual(got, want);
  }

  /**
   * The live host with an active node of `domain` and the least load (tasks in flight and
   * queued per thread of its active nodes), or null when no other host has one.
   */
  pick(domain: string): PeerHost | null {
    const live = new Map(this.hosts().filter((h) => h.live && h.url && h.host_id !== this.hostId).map((h) => [h.host_id, h]));
    const load = new Map<string, { work: number; threads: number }>();
    for (const n of this.remoteNodes()) {
      if (n.kernel_id !== domain || n.state !== 'active' || !n.host || !live.has(n.host)) continue;
      const l = load.get(n.host) ?? { work: 0, threads: 0 };
      l.work += n.in_flight + n.queued;
      l.threads += n.threads;
      load.set(n.host, l);
    }
    let best: PeerHost | null = null;
    let bestLoad = Infinity;
    for (const [host, l] of [...load.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      const per = l.work / Math.max(1, l.threads);
      if (per < bestLoad) [best, bestLoad] = [live.get(host)!, per];
    }
    return best;
  }

  /** Sends the task to `to` with the caller's credentials; the answer as the other host gave it. */
  async forward(to: PeerHost, req: Request, path: string, body: unknown, requestId: string): Promise<Relayed> {
    const at = Date.now();
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-request-id': requestId, [FORWARDED_HEADER]: `${this.hostId} ${requestId} ${at} ${this.sign(requestId, at)}` };
    for (const h of ['authorization', 'x-api-key']) {
      const v = req.headers[h];
      if (typeof v === 'string') headers[h] = v;
    }
    const r = await post(`${to.url!.replace(/\/$/, '')}${path}`, headers, JSON.stringify(body ?? null), this.timeoutMs, this.agent);
    let parsed: unknown;
    try {
      parsed = JSON.parse(r.text);
    } catch {
      parsed = { detail: r.text.slice(0, 500) };
    }
    return { status: r.status, body: parsed, host_id: to.host_id, retryAfter: r.retryAfter };
  }

  close(): void {
    this.agent.destroy();
  }
}

class PeerTimeout extends Error {
  override name = 'TimeoutError';
}

function post(url: string, headers: Record<string, string>, body: string, timeoutMs: number, agent: http.Agent): Promise<{ status: number; text: string; retryAfter: string | null }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 502, text: Buffer.concat(chunks).toString('utf8'), retryAfter: (res.headers['retry-after'] as string | undefined) ?? null }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new PeerTimeout(`no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}
