import crypto from 'node:crypto';
import os from 'node:os';
import type { Knex } from 'knex';
import type { Clock } from './services';
import type { Migration } from './db';

// Leader leases in the shared database, for jobs that must run on one host at a time (a
// planning loop, a generated agent's schedule): one row per job name with its holder and the
// time its claim runs out. Every host keeps the job's timer; at each tick it claims the lease
// (a conditional update: free, its own, or run out) and runs the job only when it holds it. A
// host that dies stops renewing, and another host takes over at its first tick after the lease
// has run out. It works the same on one SQLite host and on several hosts on PostgreSQL.

export const leaseMigrations: Migration[] = [
  {
    name: '007_leases',
    async up(db) {
      await db.schema.createTable('leases', (t) => {
        t.string('name', 200).primary();
        t.string('owner', 200).notNullable();
        t.string('lease_until', 32).notNullable();
        t.string('updated_at', 32).notNullable();
      });
    },
  },
];

export interface LeaseHolder {
  name: string;
  owner: string;
  lease_until: string;
  held_here: boolean;
}

export class Leases {
  /** This host process: host name, pid and a random part (a restarted process is a new owner). */
  readonly owner = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;

  constructor(
    private readonly db: Knex,
    private readonly clock: Clock,
  ) {}

  /** Takes or renews `name` for `ttlMs`; true when this host holds it now. */
  async claim(name: string, ttlMs: number): Promise<boolean> {
    const now = this.clock.now();
    const at = now.toISOString();
    const until = new Date(now.getTime() + ttlMs).toISOString();
    const n = await this.db('leases')
      .where({ name })
      .andWhere((w) => w.where({ owner: this.owner }).orWhere('lease_until', '<', at))
      .update({ owner: this.owner, lease_until: until, updated_at: at });
    if (n) return true;
    try {
      await this.db('leases').insert({ name, owner: this.owner, lease_until: until, updated_at: at });
      return true;
    } catch {
      // Another host holds it (or inserted it first).
      return false;
    }
  }

  /** Gives a lease up at once (a host that stops cleanly), so another host need not wait it out. */
  async release(name: string): Promise<void> {
    await this.db('leases').where({ name, owner: this.owner }).delete();
  }

  /** Who holds `name` now, or null when nobody does. */
  async holder(name: string): Promise<LeaseHolder | null> {
    const row = await this.db('leases').where({ name }).first();
    if (!row || row.lease_until < this.clock.now().toISOString()) return null;
    return { name, owner: row.owner, lease_until: row.lease_until, held_here: row.owner === this.owner };
  }
}

/**
 * Timers of leader-only jobs on this host: each tick claims the job's lease (for two periods
 * and five seconds, so the holder renews it at every tick) and runs the job only when it holds
 * it. A job whose `run` answers false is gone (stopped elsewhere): its timer stops here too.
 */
export class LeaderJobs {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private finder?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly leases: Leases,
    private readonly onError: (name: string, err: Error) => void,
  ) {}

  get owner(): string {
    return this.leases.owner;
  }

  has(name: string): boolean {
    return this.timers.has(name);
  }

  schedule(name: string, everyMs: number, run: () => Promise<boolean | void>): void {
    if (this.stopped || this.timers.has(name)) return;
    let busy = false;
    const t = setInterval(() => {
      // A run still going when the next is due is not overlapped.
      if (busy) return;
      busy = true;
      const p = (async () => {
        if (!(await this.leases.claim(name, 2 * everyMs + 5000))) return;
        if ((await run()) === false) await this.unschedule(name);
      })()
        .catch((err: Error) => this.onError(name, err))
        .finally(() => (busy = false));
      this.inFlight.add(p);
      void p.finally(() => this.inFlight.delete(p));
    }, everyMs);
    t.unref();
    this.timers.set(name, t);
  }

  /**
   * Runs `find` now and every `everyMs`: it schedules the jobs stored as running, so that
   * this host also keeps timers for jobs started through another host.
   */
  async discover(find: () => Promise<void>, everyMs: number): Promise<void> {
    await find();
    this.finder = setInterval(() => {
      const p = find().catch((err: Error) => this.onError('discover', err));
      this.inFlight.add(p);
      void p.finally(() => this.inFlight.delete(p));
    }, everyMs);
    this.finder.unref();
  }

  /** Stops the job's timer here and gives its lease up when this host holds it. */
  async unschedule(name: string): Promise<void> {
    clearInterval(this.timers.get(name));
    this.timers.delete(name);
    await this.leases.release(name);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.finder);
    for (const t of this.timers.values()) clearInterval(t);
    await Promise.allSettled([...this.inFlight]);
    await Promise.allSettled([...this.timers.keys()].map((name) => this.leases.release(name)));
    this.timers.clear();
  }
}
