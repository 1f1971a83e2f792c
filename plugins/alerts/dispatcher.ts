import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { nowIso } from '../../core/db';
import type { CloudEventsFormat } from '../../core/contracts/cloudevents';
import type { BusEvent } from '../../core/events';
import type { Services } from '../../core/services';
import { toSubscription, type Attempt, type Subscription } from './store';
import { safeLookup } from './urls';

interface Job {
  sub: Subscription;
  deliveryId: string;
  event: BusEvent;
  body: string;
  attempt: number;
}

export const SIGNATURE_HEADER = 'X-Alert-Signature';

/** `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`. */
export function sign(secret: string, body: string, t = Math.floor(Date.now() / 1000)): string {
  const mac = crypto.createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  return `t=${t},v1=${mac}`;
}

// Statuses worth another try: the receiver is down, slow or asks to come back later.
const retryable = (status: number | null) => status === null || status === 408 || status === 429 || status >= 500;

/**
 * Delivers matching bus events to webhook subscriptions. The bus listener only queues
 * (it never waits on the network); a bounded number of deliveries run at once; failed
 * attempts are retried with exponential backoff; every attempt is recorded.
 */
export class Dispatcher {
  private subs: Subscription[] = [];
  private readonly queue: Job[] = [];
  private running = 0;
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<{ abort: AbortController; done: Promise<void> }>();
  private off: () => void = () => undefined;
  private dropped = 0;

  constructor(private readonly services: Pick<Services, 'db' | 'events' | 'config' | 'log'> & { cloudEvents: CloudEventsFormat | null }) {}

  private get cfg() {
    return this.services.config.alerts;
  }

  async start(): Promise<void> {
    await this.reload();
    this.off = this.services.events.subscribe('*', (e) => this.onEvent(e));
    // Other hosts may add or delete subscriptions in a shared database.
    const t = setInterval(() => void this.reload().catch(() => undefined), 30_000);
    t.unref();
    this.timers.add(t);
  }

  async reload(): Promise<void> {
    this.subs = (await this.services.db('alert_subscriptions').select()).map(toSubscription);
  }

  onEvent(event: BusEvent): void {
    if (this.stopped) return;
    const tenant = (event.data as { tenant_id?: unknown }).tenant_id;
    for (const sub of this.subs) {
      if (!sub.event_types.includes('*') && !sub.event_types.includes(event.type)) continue;
      // Platform events (no tenant) go to every subscriber; a tenant's events only to that tenant.
      if (tenant !== undefined && tenant !== null && tenant !== sub.tenant_id) continue;
      if (this.queue.length >= this.cfg.queueLimit) {
        if (this.dropped++ % 1000 === 0) this.services.log.warn({ dropped: this.dropped }, 'alert queue full: deliveries dropped');
        continue;
      }
      const deliveryId = crypto.randomUUID();
      const body = JSON.stringify(sub.format === 'cloudevents' && this.services.cloudEvents ? this.services.cloudEvents.fromBusEvent(event, deliveryId) : { id: deliveryId, subscription_id: sub.id, type: event.type, timestamp: event.timestamp, data: event.data });
      this.queue.push({ sub, deliveryId, event, body, attempt: 1 });
    }
    this.pump();
  }

  private pump(): void {
    while (!this.stopped && this.running < this.cfg.concurrency && this.queue.length) {
      const job = this.queue.shift()!;
      this.running++;
      const abort = new AbortController();
      const entry = { abort, done: Promise.resolve() };
      entry.done = this.attempt(job, abort.signal)
        .catch((err: Error) => this.services.log.warn({ err: err.message }, 'alert delivery bookkeeping failed'))
        .finally(() => {
          this.running--;
          this.inFlight.delete(entry);
          this.pump();
        });
      this.inFlight.add(entry);
    }
  }

  private async attempt(job: Job, signal: AbortSignal): Promise<void> {
    // A subscription deleted meanwhile gets no more attempts.
    if (!this.subs.some((s) => s.id === job.sub.id)) return;
    const started = process.hrtime.bigint();
    const { status, error } = await this.post(job, signal);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const ok = status !== null && status >= 200 && status < 300;
    const again = !ok && !this.stopped && job.attempt < this.cfg.maxAttempts && retryable(status);
    const wait = Math.min(this.cfg.retryMaxMs, this.cfg.retryBaseMs * 2 ** (job.attempt - 1));
    const row: Attempt = {
      id: crypto.randomUUID(),
      delivery_id: job.deliveryId,
      subscription_id: job.sub.id,
      tenant_id: job.sub.tenant_id,
      event_type: job.event.type,
      event_timestamp: job.event.timestamp,
      attempt: job.attempt,
      status: ok ? 'succeeded' : 'failed',
      response_status: status,
      error,
      duration_ms: Math.round(ms * 100) / 100,
      next_attempt_at: again ? new Date(Date.now() + wait).toISOString() : null,
      created_at: nowIso(),
    };
    // Stopped, or the subscription was deleted while this attempt ran: nothing left to record.
    if (this.stopped || !this.subs.some((s) => s.id === job.sub.id)) return;
    await this.services.db('alert_deliveries').insert(row);
    if (!again) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.stopped) return;
      this.queue.push({ ...job, attempt: job.attempt + 1 });
      this.pump();
    }, wait);
    timer.unref();
    this.timers.add(timer);
  }

  /** One POST; resolves with the status (null when no answer came) and the error text. */
  private post(job: Job, signal: AbortSignal): Promise<{ status: number | null; error: string | null }> {
    return new Promise((resolve) => {
      const url = new URL(job.sub.url);
      const lib = url.protocol === 'https:' ? https : http;
      const req = lib.request(url, {
        method: 'POST',
        lookup: safeLookup,
        signal,
        timeout: this.cfg.timeoutMs,
        headers: {
          'content-type': job.sub.format === 'cloudevents' ? 'application/cloudevents+json; charset=utf-8' : 'application/json',
          'content-length': Buffer.byteLength(job.body),
          'user-agent': 'platform-control-alerts',
          'x-alert-event': job.event.type,
          'x-alert-delivery': job.deliveryId,
          'x-alert-attempt': String(job.attempt),
          [SIGNATURE_HEADER.toLowerCase()]: sign(job.sub.secret, job.body),
        },
      });
      req.on('response', (res) => {
        // The answer's body is not used; read it so that the socket is freed.
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? null, error: res.statusCode && res.statusCode < 300 ? null : `HTTP ${res.statusCode}` }));
        res.on('error', (err) => resolve({ status: res.statusCode ?? null, error: err.message }));
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.cfg.timeoutMs} ms`)));
      req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: null, error: err.code && err.code !== 'ABORT_ERR' ? `${err.code}: ${err.message}` : err.message }));
      req.end(job.body);
    });
  }

  /** Stops taking events, cancels waiting retries and aborts attempts in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.off();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.queue.length = 0;
    for (const f of this.inFlight) f.abort.abort();
    await Promise.all([...this.inFlight].map((f) => f.done));
  }
}
