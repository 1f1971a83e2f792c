import type { Db } from '../../../core/db';
import { HttpError } from '../../../core/errors';
import type { Caller } from '../../../core/roles';

interface Quota {
  max_concurrent: number;
  tasks_per_minute: number;
}

/**
 * Kernel quotas of onboarded tenants, enforced on every task a caller runs (the mesh's
 * admission hook): at most `max_concurrent` tasks of a tenant in flight on a kernel, and at
 * most `tasks_per_minute` started in a one-minute window (fixed, from the window's first task).
 * Counters are per host: with N hosts a tenant may use up to N times its quota. The quota rows
 * are re-read every `refreshMs` (another host's changes) and at once after this host's.
 */
export class QuotaEnforcer {
  private quotas = new Map<string, Quota>();
  private readonly inFlight = new Map<string, number>();
  private readonly windows = new Map<string, { start: number; count: number }>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly refreshMs = 5000,
  ) {}

  async start(): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => void this.reload().catch(() => undefined), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async reload(): Promise<void> {
    const rows = (await this.db('automation_quotas').select('customer_tenant', 'domain', 'max_concurrent', 'tasks_per_minute')) as Array<{ customer_tenant: string; domain: string } & Quota>;
    this.quotas = new Map(rows.map((r) => [`${r.customer_tenant}/${r.domain}`, { max_concurrent: Number(r.max_concurrent), tasks_per_minute: Number(r.tasks_per_minute) }]));
  }

  /** The admission check: throws 429 QUOTA_EXCEEDED, or returns the release of the task's slot. */
  readonly admit = (domain: string, caller: Caller): (() => void) | void => {
    const key = `${caller.tenantId}/${domain}`;
    const q = this.quotas.get(key);
    if (!q) return;
    const running = this.inFlight.get(key) ?? 0;
    if (running >= q.max_concurrent) throw refused(`${running} tasks of the tenant run on kernel ${domain}; its quota allows ${q.max_concurrent} at once`, 1);
    const now = Date.now();
    let w = this.windows.get(key);
    if (!w || now - w.start >= 60_000) this.windows.set(key, (w = { start: now, count: 0 }));
    if (w.count >= q.tasks_per_minute) throw refused(`the tenant started ${w.count} tasks on kernel ${domain} this minute; its quota allows ${q.tasks_per_minute}`, (w.start + 60_000 - now) / 1000);
    w.count++;
    this.inFlight.set(key, running + 1);
    return () => {
      const n = (this.inFlight.get(key) ?? 1) - 1;
      if (n > 0) this.inFlight.set(key, n);
      else this.inFlight.delete(key);
    };
  };
}

function refused(detail: string, retryAfterSeconds: number): HttpError {
  return new HttpError(429, detail, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) }, 'QUOTA_EXCEEDED');
}
