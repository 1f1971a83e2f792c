import type { Config } from '../../core/config';
import type { Logger } from '../../core/logger';
import type { Redis } from '../../core/redis';

/** Counts events per key within a fixed window: in memory, or in Redis so hosts share it. */
export interface WindowCounter {
  /** Current count and the time (epoch ms) the window ends. */
  get(key: string): Promise<{ count: number; resetAt: number }>;
  hit(key: string, windowMs: number): Promise<{ count: number; resetAt: number }>;
  clear(key: string): Promise<void>;
  /** Takes one count back (an attempt that turned out good). */
  undo(key: string): Promise<void>;
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

  async undo(key: string) {
    const e = this.entries.get(key);
    if (e && e.count > 0) e.count -= 1;
  }
}

/** Counts in Redis; while Redis is not connected, in this host's memory (never waiting on it). */
export class RedisCounter implements WindowCounter {
  private readonly local = new MemoryCounter();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private get away(): boolean {
    if (this.redis.status === 'wait') void this.redis.connect().catch(() => undefined);
    return this.redis.status !== 'ready';
  }

  async get(key: string) {
    if (this.away) return this.local.get(key);
    const [[, v], [, ttl]] = (await this.redis.multi().get(this.prefix + key).pttl(this.prefix + key).exec()) as Array<[unknown, unknown]>;
    const count = Number(v ?? 0);
    return { count, resetAt: count && Number(ttl) > 0 ? Date.now() + Number(ttl) : 0 };
  }

  async hit(key: string, windowMs: number) {
    if (this.away) return this.local.hit(key, windowMs);
    const k = this.prefix + key;
    const res = (await this.redis.multi().set(k, '0', 'PX', windowMs, 'NX').incr(k).pttl(k).exec()) as Array<[unknown, unknown]>;
    return { count: Number(res[1][1]), resetAt: Date.now() + Math.max(0, Number(res[2][1])) };
  }

  async clear(key: string) {
    await this.local.clear(key);
    if (!this.away) await this.redis.del(this.prefix + key);
  }

  async undo(key: string) {
    if (this.away) return this.local.undo(key);
    // Only while the key lives: a DECR on a missing key would make one without expiry.
    await this.redis.eval("if redis.call('exists', KEYS[1]) == 1 then return redis.call('decr', KEYS[1]) end return 0", 1, this.prefix + key);
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
    private readonly log: Logger,
  ) {
    this.windowMs = config.auth.loginThrottle.windowSeconds * 1000;
  }

  /**
   * Counts a login attempt before the password is checked, so that concurrent guesses
   * cannot all pass the check while the hash is being computed. Answers the seconds to
   * wait when the account or the address is over its limit, or null when it may try.
   */
  async attempt(email: string, address: string): Promise<number | null> {
    const { accountFailures, addressFailures } = this.config.auth.loginThrottle;
    // When the counter store (Redis) is away, logins still work (argon2 still slows guessing).
    const counts = await Promise.all([this.counter.hit(`acct:${email.toLowerCase()}`, this.windowMs), this.counter.hit(`addr:${address}`, this.windowMs)]).catch((err: Error) => {
      this.log.warn({ err: err.message }, 'login throttle store failed');
      return null;
    });
    if (!counts) return null;
    const [acct, addr] = counts;
    const waits: number[] = [];
    if (acct.count > accountFailures) waits.push(acct.resetAt);
    if (addr.count > addressFailures) waits.push(addr.resetAt);
    if (!waits.length) return null;
    return Math.max(1, Math.ceil((Math.max(...waits) - Date.now()) / 1000));
  }

  /** A good password clears the account's count and takes back the address's count of this attempt. */
  async succeeded(email: string, address?: string): Promise<void> {
    await Promise.all([
      this.counter.clear(`acct:${email.toLowerCase()}`),
      address ? this.counter.undo(`addr:${address}`) : undefined,
    ]).catch((err: Error) => this.log.warn({ err: err.message }, 'login throttle store failed'));
  }
}
