// The cluster registry (DESIGN §11, docs/scale-out.md): every host writes itself and its
// nodes to Redis under a lease it renews by heartbeat, and reads the other hosts' entries.
// A host whose lease ran out is lost: its nodes show as `lost` from its last entry, and one
// host (the first to claim it in Redis) raises the incident and the hub event.
import type { Db } from '../db';
import type { EventBus } from '../events';
import type { Logger } from '../logger';
import type { Redis } from '../redis';
import { storeIncident } from '../mesh/store';
import type { BreakerState, NodeView } from '../mesh/types';

export interface ClusterOptions {
  hostId: string;
  url: string | null;
  leaseMs: number;
  prefix: string;
}

/** What a host writes at each heartbeat. */
export interface HostEntry {
  host_id: string;
  url: string | null;
  started_at: string;
  heartbeat_at: string;
  nodes: NodeView[];
  /** Each kernel's circuit breaker on this host (breakers are per host). */
  breakers: Record<string, { state: BreakerState; isolated: boolean }>;
}

export class ClusterRegistry {
  private timer: NodeJS.Timeout | null = null;
  private remote: NodeView[] = [];
  private hosts: Array<HostEntry & { live: boolean }> = [];
  private readonly startedAt = new Date().toISOString();
  private ticking: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: Redis,
    private readonly opts: ClusterOptions,
    /** This host's nodes and breakers, as each heartbeat writes them. */
    private readonly local: () => Pick<HostEntry, 'nodes' | 'breakers'>,
    private readonly db: Db,
    private readonly events: EventBus,
    private readonly log: Logger,
  ) {}

  private key(kind: 'live' | 'last', hostId: string): string {
    return `${this.opts.prefix}:${kind}:${hostId}`;
  }

  private get hostsKey(): string {
    return `${this.opts.prefix}:hosts`;
  }

  /** Registers at once (so that the first request already sees the cluster), then beats. */
  async start(): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => {
      this.ticking = this.ticking.then(() => this.tick());
    }, Math.max(100, Math.floor(this.opts.leaseMs / 3)));
    this.timer.unref();
  }

  /** A graceful stop leaves the cluster: the host's nodes disappear instead of turning lost. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
    const id = this.opts.hostId;
    await this.redis.multi().srem(this.hostsKey, id).del(this.key('live', id), this.key('last', id)).exec().catch(() => undefined);
  }

  /** The other hosts' nodes as of the last heartbeat read (lost ones included). */
  remoteNodes(): NodeView[] {
    return this.remote;
  }

  /** Every host known to the cluster, this one included, with whether its lease is live. */
  hostList(): Array<Omit<HostEntry, 'nodes'> & { live: boolean; nodes: number }> {
    return this.hosts.map((h) => ({ host_id: h.host_id, url: h.url, started_at: h.started_at, heartbeat_at: h.heartbeat_at, live: h.live, nodes: h.nodes.length, breakers: h.breakers ?? {} }));
  }

  async tick(): Promise<void> {
    try {
      await this.beat();
      await this.read();
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'cluster registry: heartbeat failed');
    }
  }

  private async beat(): Promise<void> {
    const id = this.opts.hostId;
    const entry: HostEntry = { host_id: id, url: this.opts.url, started_at: this.startedAt, heartbeat_at: new Date().toISOString(), ...this.local() };
    const text = JSON.stringify(entry);
    await this.redis.multi().set(this.key('live', id), text, 'PX', this.opts.leaseMs).set(this.key('last', id), text).sadd(this.hostsKey, id).exec();
  }

  private async read(): Promise<void> {
    const ids = (await this.redis.smembers(this.hostsKey)).sort();
    if (ids.length === 0) return;
    const live = await this.redis.mget(...ids.map((h) => this.key('live', h)));
    const hosts: Array<HostEntry & { live: boolean }> = [];
    const remote: NodeView[] = [];
    for (let i = 0; i < ids.length; i++) {
      const liveText = live[i];
      const text = liveText ?? (await this.redis.get(this.key('last', ids[i])));
      if (!text) continue;
      const entry = JSON.parse(text) as HostEntry;
      hosts.push({ ...entry, live: liveText !== null });
      if (entry.host_id === this.opts.hostId) continue;
      if (liveText !== null) remote.push(...entry.nodes);
      else {
        const reason = `host ${entry.host_id} stopped heartbeating (last at ${entry.heartbeat_at})`;
        remote.push(...entry.nodes.map((n) => ({ ...n, state: 'lost' as const, health: 'unhealthy' as const, reason, in_flight: 0, queued: 0, live_threads: [] })));
        await this.raiseLost(entry, reason);
      }
    }
    this.hosts = hosts;
    this.remote = remote;
  }

  /** Once per lost heartbeat, cluster-wide: the host that claims it in Redis writes the incident. */
  private async raiseLost(entry: HostEntry, reason: string): Promise<void> {
    const claim = await this.redis.set(`${this.opts.prefix}:lost:${entry.host_id}:${entry.heartbeat_at}`, this.opts.hostId, 'PX', 24 * 3600_000, 'NX');
    if (claim !== 'OK') return;
    const at = new Date().toISOString();
    for (const n of entry.nodes) {
      await storeIncident(this.db, { kernel_id: n.kernel_id, node_id: n.id, health: 'unhealthy', previous: n.health, reason, at });
    }
    this.events.publish('cluster.host_lost', { host_id: entry.host_id, last_heartbeat_at: entry.heartbeat_at, nodes: entry.nodes.map((n) => n.id) });
    this.log.warn({ host: entry.host_id, nodes: entry.nodes.length }, 'cluster: host lost');
  }
}
