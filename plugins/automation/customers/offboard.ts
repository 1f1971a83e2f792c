import type { AccountsService } from '../../../core/contracts/accounts';
import { isPostgres, type Db } from '../../../core/db';
import type { Knex } from 'knex';

/** Tables kept when a tenant goes: the audit trail of what was done (actions) stays. */
const KEPT = new Set(['actions']);
/** Rows per table put in an export at most (the rest is counted). */
const EXPORT_ROWS = 1000;

/** Every table with a tenant_id column, found from the database's own catalogue. */
export async function tenantTables(db: Db): Promise<string[]> {
  let names: string[];
  if (isPostgres(db)) {
    const r = await db.raw(`select table_name from information_schema.columns where column_name = 'tenant_id' and table_schema = current_schema()`);
    names = (r.rows as Array<{ table_name: string }>).map((x) => x.table_name);
  } else {
    const tables = (await db.raw(`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`)) as Array<{ name: string }>;
    names = [];
    for (const t of tables) {
      const cols = (await db.raw(`pragma table_info(??)`, [t.name])) as Array<{ name: string }>;
      if (cols.some((c) => c.name === 'tenant_id')) names.push(t.name);
    }
  }
  return names.filter((n) => !KEPT.has(n)).sort();
}

/** Running work that blocks offboarding, by kind. */
export async function runningWork(db: Db, tenantId: string): Promise<Record<string, number>> {
  const checks: Array<[string, string, string, string[]]> = [
    ['workflow_executions', 'workflow_executions', 'state', ['queued', 'running']],
    ['deployments', 'automation_deployments', 'state', ['queued', 'running', 'rolling_back']],
    ['chaos_experiments', 'chaos_experiments', 'status', ['running', 'pending']],
  ];
  const out: Record<string, number> = {};
  for (const [kind, table, col, states] of checks) {
    if (!(await db.schema.hasTable(table))) continue;
    const r = await db(table).where({ tenant_id: tenantId }).whereIn(col, states).count<{ n: number | string }[]>('* as n').first();
    const n = Number(r?.n ?? 0);
    if (n) out[kind] = n;
  }
  return out;
}

/** The tenant's rows, per table (at most EXPORT_ROWS each; `counts` has the full numbers). */
export async function exportTenant(db: Db | Knex.Transaction, tables: string[], tenantId: string) {
  const data: Record<string, unknown[]> = {};
  const counts: Record<string, number> = {};
  for (const t of tables) {
    const n = Number((await db(t).where({ tenant_id: tenantId }).count<{ n: number | string }[]>('* as n').first())?.n ?? 0);
    if (!n) continue;
    counts[t] = n;
    data[t] = await db(t).where({ tenant_id: tenantId }).limit(EXPORT_ROWS);
  }
  const tenant = await db('tenants').where({ id: tenantId }).first();
  return { tenant: tenant ?? null, counts, tables: data, truncated_at: EXPORT_ROWS };
}

/**
 * Deletes every row the tenant owns, then the tenant. Sessions are closed first (refresh
 * tokens revoked and every token of its users refused), so no one of it keeps access.
 * Tables are emptied in passes: a row another table still points at waits for the next pass.
 */
export async function deleteTenant(db: Db, accounts: AccountsService, tables: string[], tenantId: string): Promise<Record<string, number>> {
  const users = await db('users').where({ tenant_id: tenantId }).select('id');
  for (const u of users) await accounts.endAllSessions({ id: u.id as string, tenantId });
  const deleted: Record<string, number> = {};
  await db.transaction(async (trx) => {
    let left = tables.filter((t) => t !== 'revoked_tokens');
    for (let pass = 0; left.length && pass < 10; pass++) {
      const failed: string[] = [];
      for (const t of left) {
        try {
          const n = Number(await trx.transaction(async (sp) => sp(t).where({ tenant_id: tenantId }).delete()));
          if (n) deleted[t] = (deleted[t] ?? 0) + n;
        } catch {
          failed.push(t);
        }
      }
      left = failed;
    }
    if (left.length) throw new Error(`rows of ${left.join(', ')} could not be deleted`);
    deleted.tenants = await trx('tenants').where({ id: tenantId }).delete();
  });
  return deleted;
}
