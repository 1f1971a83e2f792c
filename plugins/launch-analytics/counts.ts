import type { Db, Migration } from '../../core/db';
import type { Logger } from '../../core/logger';
import type { Pipeline, RequestRecord } from '../../core/http/pipeline';

export const countMigrations: Migration[] = [
  {
    name: '001_request_counts',
    async up(db) {
      // Requests by hour (the finest bucket the time series offers); errors are 5xx answers.
      await db.schema.createTable('launch_request_counts', (t) => {
        t.string('hour', 13).primary(); // 2026-01-02T15
        t.bigInteger('requests').notNullable();
        t.bigInteger('errors').notNullable();
      });
    },
  },
];

/**
 * Counts every request the host answers, in memory by hour, and adds the counts to the
 * table every few seconds and at stop (one upsert per hour touched, whatever the load).
 */
export class RequestCounter {
  private pending = new Map<string, { requests: number; errors: number }>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly pipeline: Pipeline,
  ) {}

  observe = (r: RequestRecord): void => {
    const hour = new Date().toISOString().slice(0, 13);
    const c = this.pending.get(hour) ?? { requests: 0, errors: 0 };
    c.requests++;
    if (r.status >= 500) c.errors++;
    this.pending.set(hour, c);
  };

  start(everyMs = 5000): void {
    this.pipeline.observers.push(this.observe);
    this.timer = setInterval(() => void this.flush(), everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    const i = this.pipeline.observers.indexOf(this.observe);
    if (i >= 0) this.pipeline.observers.splice(i, 1);
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }

  /** Writes what is pending; reads call it first so they include the requests so far. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (!this.pending.size) return;
      const batch = this.pending;
      this.pending = new Map();
      try {
        await this.db.transaction(async (trx) => {
          for (const [hour, c] of batch) {
            await trx('launch_request_counts')
              .insert({ hour, requests: c.requests, errors: c.errors })
              .onConflict('hour')
              .merge({ requests: trx.raw('launch_request_counts.requests + ?', [c.requests]), errors: trx.raw('launch_request_counts.errors + ?', [c.errors]) });
          }
        });
      } catch (err) {
        // Kept for the next flush rather than lost.
        for (const [hour, c] of batch) {
          const p = this.pending.get(hour) ?? { requests: 0, errors: 0 };
          this.pending.set(hour, { requests: p.requests + c.requests, errors: p.errors + c.errors });
        }
        this.log.warn({ err: (err as Error).message }, 'launch analytics: request counts not written');
      }
    });
    return this.flushing;
  }
}
