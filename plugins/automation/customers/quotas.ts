import type { Db } from '../../../core/db';
import { HttpError } from '../../../core/errors';
import type { RateLimiter } from '../../../core/limits';
import type { Caller } from '../../../core/roles';

interface Quota {
  max_concurrent: number;
  tasks_per_minute: number;
}

/**
 * Kernel quotas of onboarded tenants, enforced on every task a caller runs (the mesh's
 * admission hook): at most `max_concurrent` tasks of a tenant in flight on a kernel, and at
 * most `tasks_per_minute` started in a rate-limit window (core.limits: shared by every host
 * through Redis when it is configured, so N hosts together allow the quota, not N times it).
 * The window is `limits.windowSeconds` (60 by default); another length scales the budget to
 * it. The in-flight count is this host's: a task runs on the host that admitted it.
 * The quota rows are re-read every `refreshMs` (another host's changes) and at once after this host's.
 */
export class QuotaEnforcer {
  private quotas = new Map<string, Quota>();
  private readonly inFlight = new Map<string, number>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly limits: RateLimiter,
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
  readonly admit = async (domain: string, caller: Caller): Promise<(() => void) | void> => {
    const key = `${caller.tenantId}/${domain}`;
    const q = this.quotas.get(key);
    if (!q) return;
    const running = this.inFlight.get(key) ?? 0;
    if (running >= q.max_concurrent) throw refused(`${running} tasks of the tenant run on kernel ${domain}; its quota allows ${q.max_concurrent} at once`, 1);
    // Taken before the slot: a task refused by the window never held one.
    this.inFlight.set(key, running + 1);
    const release = () => {
      const n = (this.inFlight.get(key) ?? 1) - 1;
      if (n > 0) this.inFlight.set(key, n);
      else this.inFlight.delete(key);
    };
    const windowSeconds = this.limits.window;
    const budget = Math.max(1, Math.round((q.tasks_per_minute * windowSeconds) / 60));
    let take;
    try {
      take = await this.limits.takeNamed(`automation-quota:${key}`, budget);
    } catch (err) {
      release();
      throw err;
    }
    if (!take.allowed) {
      release();
      throw refused(`the tenant started ${budget} tasks on kernel ${domain} in this ${windowSeconds} s window; its quota allows ${q.tasks_per_minute} a minute`, (take.resetAt - Date.now()) / 1000);
    }
    return release;
  };
}

function refused(detail: string, retryAfterSeconds: number): HttpError {
  return new HttpError(429, detail, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) }, 'QUOTA_EXCEEDED');
}
