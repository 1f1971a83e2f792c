import Bottleneck from 'bottleneck';
import { Redis } from 'ioredis';
import type { Logger } from '../logger';

/** The outcome of taking one request from a budget. */
export interface Take {
  allowed: boolean;
  limit: number;
  /** Requests left in this window (0 when refused). */
  remaining: number;
  /** When the window ends and the budget is full again (epoch ms). */
  resetAt: number;
}

interface Bucket {
  limiter: Bottleneck;
  limit: number;
  /** Known end of the current window (epoch ms); 0 when it must be read. */
  windowEnd: number;
  /** Refused without asking the store until then: over budget in this window. */
  blockedUntil: number;
  lastUsed: number;
}

interface LocalStoreInternals {
  yieldLoop?: () => Promise<void>;
  _lastReservoirRefresh?: number;
  storeOptions: { reservoir: number | null };
  computeCapacity(): number | null;
  __incrementReservoir__?: (incr: number) => Promise<number>;
}

/** Bottleneck's job dispatcher, which every reservoir change runs. */
interface LimiterInternals {
  _drainAll?: (capacity?: number | null, total?: number) => Promise<number>;
}

/**
 * Per-key request budgets on bottleneck reservoirs: `reservoir` is the budget, refreshed
 * to the full amount every window. A request takes one with `incrementReservoir(-1)`; a
 * negative result means over budget. Jobs are never scheduled, so nothing is ever queued.
 *
 * Without Redis each limiter uses bottleneck's local store. That store yields to a 0 ms
 * timer before every operation (~1.2 ms a call, ~5 ms for schedule()); as no job ever
 * waits on these limiters, the yield protects nothing, so it is replaced by a resolved
 * promise (~12 us a call). Every reservoir change also runs bottleneck's job dispatcher
 * (a lock, a queue and several promises) to start jobs the new capacity allows; with no job
 * ever queued, it is skipped while the queue is empty (~4 us a call). And the local store's
 * incrementReservoir, compiled to a Babel async generator, is replaced by the same steps in
 * a native async function: the generator's objects outlive young-generation collections and
 * are promoted (~3 MB per scavenge under load), which made every scavenge take milliseconds
 * and showed in the tail of every request. With Redis, limiters use bottleneck's ioredis
 * clustering: the reservoir lives in Redis and every host draws from the same one (one round trip a call).
 */
export class Buckets {
  private readonly buckets = new Map<string, Bucket>();

  /** Live budgets (one per tenant or address and window; swept when their window ends). */
  get size(): number {
    return this.buckets.size;
  }
  private readonly connection: Bottleneck.IORedisConnection | null;
  private readonly client: Redis | null;
  private readonly sweeper: NodeJS.Timeout;
  /** Bottleneck waits for Redis forever; until it has connected, calls fail at once instead. */
  private connected = false;
  /** Budgets of this host alone, used while Redis cannot be reached. */
  private readonly fallback: Buckets | null;

  constructor(
    private readonly windowMs: number,
    private readonly prefix: string,
    redisUrl: string | undefined,
    private readonly log: Logger,
  ) {
    if (redisUrl) {
      // Its own connection: commands fail fast instead of queueing while Redis is away.
      this.client = new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: 1000, connectTimeout: 2000 });
      this.client.on('error', () => undefined);
      this.connection = new Bottleneck.IORedisConnection({ client: this.client, Redis: Redis as never });
      this.connection.on('error', (err: Error) => this.log.warn({ err: err.message }, 'rate limit store error'));
      void (this.connection as unknown as { ready: Promise<unknown> }).ready.then(() => (this.connected = true), () => undefined);
      this.fallback = new Buckets(windowMs, prefix, undefined, log);
    } else {
      this.client = null;
      this.connection = null;
      this.fallback = null;
    }
    this.sweeper = setInterval(() => this.sweep(), windowMs);
    this.sweeper.unref();
  }

  /** Waits (at most `ms`) until the shared store is connected; at once without Redis. */
  async ready(ms: number): Promise<boolean> {
    if (!this.connection || this.connected) return true;
    let timer: NodeJS.Timeout;
    const ready = (this.connection as unknown as { ready: Promise<unknown> }).ready.then(() => true, () => false);
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    return Promise.race([ready, late]).finally(() => clearTimeout(timer));
  }

  get shared(): boolean {
    return this.connection !== null;
  }

  /** When `key` is known to be over budget in this window, the window's end (epoch ms); else 0. */
  blockedUntil(key: string, now: number): number {
    const store = this.fallback && (!this.connected || this.client!.status !== 'ready') ? this.fallback : this;
    const until = store.buckets.get(key)?.blockedUntil ?? 0;
    return until > now ? until : 0;
  }

  /** Takes one request from the budget of `key` (created with `limit` a window). */
  async take(key: string, limit: number): Promise<Take> {
    if (!this.fallback) return this.takeHere(key, limit);
    if (!this.connected || this.client!.status !== 'ready') return this.fallback.take(key, limit);
    try {
      return await this.takeHere(key, limit);
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'rate limit store (Redis) failed; using this host\'s budgets');
      return this.fallback.take(key, limit);
    }
  }

  private async takeHere(key: string, limit: number): Promise<Take> {
    const now = Date.now();
    const b = this.bucket(key, limit, now);
    b.lastUsed = now;
    if (b.blockedUntil > now) return { allowed: false, limit, remaining: 0, resetAt: b.blockedUntil };
    let left = await this.call(() => b.limiter.incrementReservoir(-1));
    if (this.connection && left === limit) {
      // Redis refreshed the window inside that call, after our decrement: count us again.
      left = await this.call(() => b.limiter.incrementReservoir(-1));
      b.windowEnd = now + this.windowMs;
    }
    const resetAt = this.connection ? await this.sharedWindowEnd(b, key, now) : this.localWindowEnd(b, now);
    if (left < 0) {
      b.blockedUntil = resetAt;
      return { allowed: false, limit, remaining: 0, resetAt };
    }
    return { allowed: true, limit, remaining: left, resetAt };
  }

  /** A store call; with Redis bounded in time, so a lost connection cannot hang requests. */
  private call<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.connection) return fn();
    if (!this.connected) return Promise.reject(new Error('rate limit store (Redis) is not connected'));
    let timer: NodeJS.Timeout;
    return Promise.race([
      fn(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('rate limit store (Redis) did not answer within 1 s')), 1000);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  private bucket(key: string, limit: number, now: number): Bucket {
    const found = this.buckets.get(key);
    if (found) return found;
    const options: Bottleneck.ConstructorOptions = {
      id: `${this.prefix}:${key}`,
      reservoir: limit,
      reservoirRefreshAmount: limit,
      reservoirRefreshInterval: this.windowMs,
    };
    const limiter = this.connection
      ? new Bottleneck({ ...options, datastore: 'ioredis', connection: this.connection, clearDatastore: false, timeout: this.windowMs * 2 })
      : new Bottleneck(options);
    if (!this.connection) {
      const store = (limiter as unknown as { _store: LocalStoreInternals })._store;
      if (typeof store.yieldLoop === 'function') store.yieldLoop = () => Promise.resolve();
      if (typeof store.__incrementReservoir__ === 'function' && typeof store.computeCapacity === 'function') {
        const instance = limiter as unknown as Required<LimiterInternals>;
        // What LocalDatastore.__incrementReservoir__ does (bottleneck 2.19), step for step.
        store.__incrementReservoir__ = async (incr: number) => {
          await store.yieldLoop!();
          const reservoir = (store.storeOptions.reservoir! += incr);
          void instance._drainAll(store.computeCapacity());
          return reservoir;
        };
      }
      const internals = limiter as unknown as LimiterInternals;
      const drainAll = internals._drainAll;
      if (typeof drainAll === 'function') {
        internals._drainAll = (capacity, total = 0) => (limiter.queued() === 0 ? Promise.resolve(total) : drainAll.call(limiter, capacity, total));
      }
    }
    limiter.on('error', (err: Error) => this.log.warn({ err: err.message, key }, 'rate limiter error'));
    const b: Bucket = { limiter, limit, windowEnd: 0, blockedUntil: 0, lastUsed: now };
    this.buckets.set(key, b);
    return b;
  }

  private localWindowEnd(b: Bucket, now: number): number {
    const store = (b.limiter as unknown as { _store: LocalStoreInternals })._store;
    return (store._lastReservoirRefresh ?? now) + this.windowMs;
  }

  private async sharedWindowEnd(b: Bucket, key: string, now: number): Promise<number> {
    if (b.windowEnd > now) return b.windowEnd;
    // Another host started this window: read when, once per window.
    const last = Number(await this.call(() => this.client!.hget(`b_${this.prefix}:${key}_settings`, 'lastReservoirRefresh')));
    b.windowEnd = Number.isFinite(last) && last + this.windowMs > now ? last + this.windowMs : now + this.windowMs;
    return b.windowEnd;
  }

  private sweep(): void {
    // Unsubscribing a Redis limiter while Redis is away rejects inside bottleneck: wait.
    if (this.client && this.client.status !== 'ready') return;
    const idle = Date.now() - 2 * this.windowMs;
    for (const [k, b] of this.buckets) {
      if (b.lastUsed < idle) {
        this.buckets.delete(k);
        void disconnect(b.limiter);
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.buckets.values()];
    this.buckets.clear();
    // The shared connection first: it stops every limiter's heartbeat, and once it is
    // terminated the limiters no longer try to unsubscribe (which fails with Redis away).
    if (this.connection) await this.connection.disconnect(false).catch(() => undefined);
    await Promise.all(all.map((b) => disconnect(b.limiter)));
    await this.fallback?.close();
  }
}

/** Bottleneck's disconnect returns nothing for limiters on a shared Redis connection. */
function disconnect(limiter: Bottleneck): Promise<void> {
  return Promise.resolve()
    .then(() => limiter.disconnect(false))
    .then(() => undefined, () => undefined);
}
