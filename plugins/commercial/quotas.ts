import type { UsageMeter } from '../../core/contracts/usage';
import type { Db } from '../../core/db';
import { HttpError } from '../../core/errors';
import type { Caller } from '../../core/roles';

const DAY = 86_400_000;

/**
 * Kernel quotas set by provisioning: tasks a tenant may run on a kernel per UTC day, checked
 * on every task run for one of its callers wherever it starts (the task route, workflows,
 * /uaicp workflow runs, public runs: core's mesh admission check). Over it: 429 KERNEL_QUOTA
 * until the next UTC midnight. Quotas are read from the database at most every 5 s per tenant
 * (10,000 tenants remembered at most); the day's count is the metered one (usage service), so
 * every host sees the same count.
 */
export function quotaAdmitter(db: Db, usage: UsageMeter, now: () => Date): (kernel: string, caller: Caller) => Promise<void> {
  const cache = new Map<string, { at: number; quotas: Map<string, number> }>();
  const quotasOf = async (tenantId: string) => {
    const hit = cache.get(tenantId);
    if (hit && hit.at > Date.now() - 5000) return hit.quotas;
    const rows = await db('kernel_quotas').where({ tenant_id: tenantId }).select('kernel', 'tasks_per_day');
    const quotas = new Map(rows.map((r) => [r.kernel as string, Number(r.tasks_per_day)]));
    cache.delete(tenantId);
    if (cache.size >= 10_000) cache.delete(cache.keys().next().value!);
    cache.set(tenantId, { at: Date.now(), quotas });
    return quotas;
  };
  return async (kernel: string, caller: Caller) => {
    const quota = (await quotasOf(caller.tenantId)).get(kernel);
    if (quota === undefined) return;
    const t = now();
    const dayStart = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate()));
    const rows = await usage.query({ tenantId: caller.tenantId, metrics: ['kernel_tasks'], from: dayStart.toISOString(), to: new Date(dayStart.getTime() + DAY).toISOString(), granularity: 'total' });
    const used = rows.filter((r) => r.dimension === kernel).reduce((a, r) => a + r.quantity, 0);
    if (used >= quota) {
      const wait = Math.max(1, Math.ceil((dayStart.getTime() + DAY - t.getTime()) / 1000));
      throw new HttpError(429, `Kernel quota reached: ${quota} ${kernel} tasks a day (used ${used})`, { 'Retry-After': String(wait) }, 'KERNEL_QUOTA');
    }
  };
}
