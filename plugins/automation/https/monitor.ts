import crypto from 'node:crypto';
import type { Config } from '../../../core/config';
import { nowIso, type Db } from '../../../core/db';
import type { Certificates } from '../certs/service';
import type { HttpsListener } from './listener';
import { verifyTls, type VerifyResult } from './verify';

export interface HostTarget {
  host: string;
  port: number;
  servername: string | null;
}

const label = (t: HostTarget) => `${t.host}:${t.port}${t.servername ? `/${t.servername}` : ''}`;

/** Watches TLS endpoints (our listener and the hosts an operator lists) with real handshakes. */
export class HttpsMonitor {
  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly listener: HttpsListener,
    private readonly certs: Certificates,
    private readonly now: () => Date,
  ) {}

  /** The listener of this host, as a target (servername: the first name of its certificate). */
  ownTarget(): HostTarget | null {
    const port = this.listener.port;
    const cert = this.listener.certificate;
    if (!port || !cert) return null;
    const names = JSON.parse(cert.names) as string[];
    const host = this.config.automation.https.host ?? this.config.server.host;
    return { host: host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host, port, servername: names.find((n) => !/^[\d.:]+$/.test(n)) ?? null };
  }

  async targets(): Promise<HostTarget[]> {
    const rows = await this.db('automation_https_targets').orderBy('created_at');
    return rows.map((r) => ({ host: r.host as string, port: Number(r.port), servername: (r.servername as string | null) ?? null }));
  }

  /** Replaces the list of hosts to watch. */
  async setTargets(list: HostTarget[]): Promise<HostTarget[]> {
    await this.db.transaction(async (trx) => {
      await trx('automation_https_targets').delete();
      if (list.length) await trx('automation_https_targets').insert(list.map((t) => ({ id: crypto.randomUUID(), host: t.host, port: t.port, servername: t.servername, created_at: nowIso() })));
    });
    return this.targets();
  }

  async verify(t: HostTarget): Promise<VerifyResult> {
    return verifyTls(t, [await this.certs.ca.certificatePem()], this.config.automation.probeTimeoutMs, this.now());
  }

  /** One handshake per watched host (and our own listener), each stored. */
  async checkAll(): Promise<Array<VerifyResult & { target: string }>> {
    const own = this.ownTarget();
    const list = [...(own ? [own] : []), ...(await this.targets())];
    const out: Array<VerifyResult & { target: string }> = [];
    for (const t of list) {
      const r = await this.verify(t);
      out.push({ ...r, target: label(t) });
      await this.db('automation_https_checks').insert({ id: crypto.randomUUID(), target: label(t), ok: r.ok, authorized: r.authorized, days_left: r.days_left, protocol: r.protocol, handshake_ms: r.handshake_ms, error: r.error ?? r.authorization_error, checked_at: nowIso() });
    }
    return out;
  }

  /** Latest check of every target. */
  async latest(): Promise<Array<Record<string, unknown>>> {
    const newest = this.db('automation_https_checks').select('target').max('checked_at as at').groupBy('target').as('n');
    const rows = await this.db('automation_https_checks as c').join(newest, (j) => j.on('c.target', 'n.target').andOn('c.checked_at', 'n.at')).select('c.*').orderBy('c.target');
    const seen = new Set<string>();
    return rows.filter((r) => !seen.has(r.target) && seen.add(r.target)).map((r) => ({
      target: r.target, ok: !!r.ok, authorized: !!r.authorized, days_left: r.days_left === null ? null : Number(r.days_left), protocol: r.protocol, handshake_ms: r.handshake_ms === null ? null : Number(r.handshake_ms), error: r.error, checked_at: r.checked_at,
    }));
  }

  /** Counts from stored checks (all of them) and the listener's own counters (since it started). */
  async metrics() {
    const rows = (await this.db('automation_https_checks').select('target', this.db.raw('count(*) as n'), this.db.raw('sum(case when ok then 1 else 0 end) as good'), this.db.raw('avg(handshake_ms) as mean_ms')).groupBy('target')) as unknown as Array<{ target: string; n: number | string; good: number | string | null; mean_ms: number | string | null }>;
    return {
      listener: this.listener.status(),
      checks: rows.map((r) => ({ target: r.target, checks: Number(r.n), succeeded: Number(r.good ?? 0), failed: Number(r.n) - Number(r.good ?? 0), mean_handshake_ms: r.mean_ms === null ? null : Math.round(Number(r.mean_ms) * 1000) / 1000 })),
      method: 'counts over every stored handshake check per target; listener counters since the listener started',
    };
  }
}
