import type { Logger } from '../../core/logger';

/** Tracks background promises so that the plugin's stop waits for them. */
export class Jobs {
  private readonly running = new Set<Promise<unknown>>();
  constructor(private readonly log: Logger) {}

  add(what: string, p: Promise<unknown>): void {
    const q = p.catch((err: Error) => this.log.error({ err: err.message, what }, 'enterprise background work failed'));
    this.running.add(q);
    void q.finally(() => this.running.delete(q));
  }

  async stop(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }
}
