// Back-pressure: a host decodes and stores at most `max` export requests at once. Past that
// an exporter gets 429 with Retry-After (OTLP/HTTP's signal to back off and retry), and 503
// while the host is stopping, rather than a queue that grows without bound.
import { TooManyRequests, Unavailable } from '../../core/errors';

export class Gate {
  /** Export requests being decoded and stored now. */
  inFlight = 0;
  /** Requests refused with 429 since the host started. */
  throttled = 0;

  constructor(private readonly max: () => number, private readonly retryAfter: () => number, private readonly stopping: () => boolean) {}

  /** Runs `work` inside the bound, or refuses at once. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.stopping()) throw new Unavailable('The host is stopping; retry on another host or later', this.retryAfter(), 'STOPPING');
    if (this.inFlight >= this.max()) {
      this.throttled++;
      throw new TooManyRequests(`The receiver is handling ${this.inFlight} export requests, its bound; retry after the delay given`, this.retryAfter());
    }
    this.inFlight++;
    try {
      return await work();
    } finally {
      this.inFlight--;
    }
  }
}
