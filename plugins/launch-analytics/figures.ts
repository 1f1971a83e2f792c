import type { Db } from '../../core/db';

export type Bucket = 'hour' | 'day';
const WIDTH: Record<Bucket, number> = { hour: 13, day: 10 };
export const BUCKET_MS: Record<Bucket, number> = { hour: 3600_000, day: 86_400_000 };

export interface Figures {
  signups: number;
  users: number;
  activations: number;
  active_tenants: number;
  requests: number;
  request_errors: number;
  tasks: number;
  task_errors: number;
}

const zero = (): Figures => ({ signups: 0, users: 0, activations: 0, active_tenants: 0, requests: 0, request_errors: 0, tasks: 0, task_errors: 0 });

/**
 * The launch figures of each bucket in [since, until), from the stored records: tenants and
 * users created, activations (a tenant's first successful task), tenants with a task or a
 * recorded action, requests and 5xx answers (counted by this plugin), tasks and failed tasks.
 * Buckets are prefixes of the ISO timestamps, so both databases group alike.
 */
export async function figures(db: Db, since: string, until: string, bucket: Bucket): Promise<Map<string, Figures>> {
  const w = WIDTH[bucket];
  const key = (col: string) => db.raw(`substr(${col}, 1, ${w}) as k`);
  const inWindow = (col: string) => (q: import('knex').Knex.QueryBuilder) => q.where(col, '>=', since).andWhere(col, '<', until);
  const out = new Map<string, Figures>();
  const add = (rows: Array<Record<string, unknown>>, field: keyof Figures) => {
    for (const r of rows) {
      const f = out.get(String(r.k)) ?? zero();
      f[field] += Number(r.n);
      out.set(String(r.k), f);
    }
  };
  add(await db('tenants').select(key('created_at')).count({ n: '*' }).modify(inWindow('created_at')).groupBy('k'), 'signups');
  add(await db('users').select(key('created_at')).count({ n: '*' }).modify(inWindow('created_at')).groupBy('k'), 'users');
  const firsts = db('task_outcomes').select('tenant_id').min({ first: 'at' }).where('ok', true).whereNotNull('tenant_id').groupBy('tenant_id').as('f');
  add(await db.from(firsts).select(db.raw(`substr(first, 1, ${w}) as k`)).count({ n: '*' }).where('first', '>=', since).andWhere('first', '<', until).groupBy('k'), 'activations');
  const activeRows = await rowsOf(db, `SELECT k, count(DISTINCT tenant_id) AS n FROM (${ACTIVE(`substr(at, 1, ${w})`, `substr(created_at, 1, ${w})`)}) a GROUP BY k`, [since, until, since, until]);
  add(activeRows, 'active_tenants');
  add(await db('task_outcomes').select(key('at')).count({ n: '*' }).modify(inWindow('at')).groupBy('k'), 'tasks');
  add(await db('task_outcomes').select(key('at')).count({ n: '*' }).modify(inWindow('at')).where('ok', false).groupBy('k'), 'task_errors');
  // Requests are counted by the hour: an hour the window only partly covers counts whole.
  const hours = await db('launch_request_counts').where('hour', '>=', since.slice(0, 13)).andWhere('hour', '<=', until.slice(0, 13)).select('hour', 'requests', 'errors');
  for (const h of hours) {
    const k = String(h.hour).slice(0, w);
    const f = out.get(k) ?? zero();
    f.requests += Number(h.requests);
    f.request_errors += Number(h.errors);
    out.set(k, f);
  }
  return out;
}

/** Distinct tenants active over the whole window (not the sum of the buckets' counts). */
export async function activeTenants(db: Db, since: string, until: string): Promise<number> {
  const rows = await rowsOf(db, `SELECT count(DISTINCT tenant_id) AS n FROM (${ACTIVE("'all'", "'all'")}) a`, [since, until, since, until]);
  return Number(rows[0]?.n ?? 0);
}

// Tenants with a task or a recorded action, keyed by the given expressions (SQL in both dialects).
const ACTIVE = (taskKey: string, actionKey: string) =>
  `SELECT ${taskKey} AS k, tenant_id FROM task_outcomes WHERE at >= ? AND at < ? AND tenant_id IS NOT NULL
   UNION SELECT ${actionKey} AS k, tenant_id FROM actions WHERE created_at >= ? AND created_at < ? AND tenant_id IS NOT NULL`;

async function rowsOf(db: Db, sql: string, args: string[]): Promise<Array<Record<string, unknown>>> {
  const r = await db.raw(sql, args);
  return Array.isArray(r) ? r : (r as { rows: Array<Record<string, unknown>> }).rows;
}

export function bucketStarts(since: Date, until: Date, bucket: Bucket): string[] {
  const out: string[] = [];
  const step = BUCKET_MS[bucket];
  const first = new Date(Math.floor(since.getTime() / step) * step);
  for (let t = first.getTime(); t < until.getTime(); t += step) out.push(new Date(t).toISOString());
  return out;
}
export const keyOf = (iso: string, bucket: Bucket) => iso.slice(0, WIDTH[bucket]);
export { zero };
