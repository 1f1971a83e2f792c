/**
 * Splits long loops of the main thread into slices of about `budgetMs`. Ingest works through
 * hundreds of events per request; without a pause, the database's answers (each statement of
 * a commit needs the event loop to send the next) wait behind whole batches.
 */
export class Slices {
  private start = performance.now();

  constructor(private readonly budgetMs = 1) {}

  /** True when the current slice has used its time (checked every few items by the caller). */
  due(): boolean {
    return performance.now() - this.start >= this.budgetMs;
  }

  /** Lets the event loop run pending I/O callbacks, then starts a new slice. */
  async pause(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.start = performance.now();
  }
}
