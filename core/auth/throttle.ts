import type { Config } from '../config';
import type { Redis } from '../redis';

/** Counts events per key within a fixed window: in memory, or in Redis so hosts share it. */
export interface WindowCounter {
  /** Current count and the time (epoch ms) the window ends. */
  get(key: string): Promise<{ count: number; resetAt: number }>;
  hit(key: string, windowMs: number): Promise<{ count: number; resetAt: number }>;
  clear(key: string): Promise<void>;
}

export class MemoryCounter implements WindowCounter {
  private readonly entries = new Map<string, { count: number; resetAt: number }>();

  async get(key: string) {
    const e = this.entries.get(key);
    if (!e || e.resetAt <= Date.now()) return { count: 0, resetAt: 0 };
    return { ...e };
  }

  async hit(key: string, windowMs: number) {
    const now = Date.now();
    // Keep the map bounded when many keys are tried (e.g. a spray of e-mails).
    if (this.entries.size > 50_000) for (const [k, e] of this.entries) if (e.resetAt <= now) this.entries.delete(k);
    let e = this.entries.get(key);
    if (!e || e.resetAt <= now) {
      e = { count: 0, resetAt: now + windowMs };
      this.entries.set(key, e);
    }
    e.count += 1;
    return { ...e };
  }

  async clear(key: string) {
    this.entries.delete(key);
  }
}

export class RedisCounter implements WindowCounter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async get(key: string) {
    const [[, v], [, ttl]] = (await this.redis.multi().get(this.prefix + key).pttl(this.prefix + key).exec()) as Array<[unknown, unknown]>;
    const count = Number(v ?? 0);
    return { count, resetAt: count && Number(ttl) > 0 ? Date.now() + Number(ttl) : 0 };
  }

  async hit(key: string, windowMs: number) {
    const k = this.prefix + key;
    const res = (await this.redis.multi().set(k, '0', 'PX', windowMs, 'NX').incr(k).pttl(k).exec()) as Array<[unknown, unknown]>;
    return { count: Number(res[1][1]), resetAt: Date.now() + Math.max(0, Number(res[2][1])) };
  }

  async clear(key: string) {
    await this.redis.del(this.prefix + key);
  }
}

/**
 * Failed logins per account and per client address. Past the limit, logins for that
 * account (existing or not) or from that address answer 429 until the window ends.
 */
export class LoginThrottle {
  private readonly windowMs: number;

  constructor(
    private readonly config: Config,
    private readonly counter: WindowCounter,
  ) {
    this.windowMs = config.auth.loginThrottle.windowSeconds * 1000;
  }

  /** Seconds to wait when this account or address is throttled; null when it may try. */
  async retryAfter(email: string, address: string): Promise<number | null> {
    const { accountFailures, addressFailures } = this.config.auth.loginThrottle;
    const [acct, addr] = await Promise.all([this.counter.get(`acct:${email.toLowerCase()}`), this.counter.get(`addr:${address}`)]);
    const waits: number[] = [];
    if (acct.count >= accountFailures) waits.push(acct.resetAt);
    if (addr.count >= addressFailures) waits.push(addr.resetAt);
    if (!waits.length) return null;
    return Math.max(1, Math.ceil((Math.max(...waits) - Date.now()) / 1000));
  }

  async failed(email: string, address: string): Promise<void> {
    await Promise.all([this.counter.hit(`acct:${email.toLowerCase()}`, this.windowMs), this.counter.hit(`addr:${address}`, this.windowMs)]);
  }

  /** A good password clears the account's count (the address keeps its own). */
  async succeeded(email: string): Promise<void> {
    await this.counter.clear(`acct:${email.toLowerCase()}`);
  }
}
