import type { Knex } from 'knex';
import type { Db } from './db';
import { NotFound } from './errors';
import type { Caller } from './roles';

type Row = Record<string, unknown>;

/**
 * Data access bound to one tenant, so that a plugin cannot forget the tenant filter.
 * Reads select from a derived table that holds only the tenant's rows, so no later
 * `where`/`orWhere` can reach another tenant's; writes always carry the tenant in their
 * condition, and inserts get it stamped on. Another tenant's object is simply not found.
 */
export class TenantScope {
  constructor(
    private readonly db: Db,
    readonly tenantId: string,
  ) {}

  /** A query over the tenant's rows of `table` (alias: the table name). */
  select(table: string): Knex.QueryBuilder {
    return this.db.from(this.db(table).where('tenant_id', this.tenantId).as(table));
  }

  /** One row by a condition, or a 404 naming `what`. */
  async get<T = Row>(table: string, where: Row, what = 'Object'): Promise<T> {
    const row = await this.select(table).where(where).first();
    if (!row) throw new NotFound(`${what} not found`);
    return row as T;
  }

  async insert(table: string, rows: Row | Row[]): Promise<void> {
    const list = (Array.isArray(rows) ? rows : [rows]).map((r) => ({ ...r, tenant_id: this.tenantId }));
    await this.db(table).insert(list);
  }

  /** Updates the tenant's rows matching `where`; 404 when none match. The tenant cannot change. */
  async update(table: string, where: Row, patch: Row, what = 'Object'): Promise<number> {
    const { tenant_id: _ignored, ...rest } = patch;
    const n = await this.db(table).where(where).andWhere('tenant_id', this.tenantId).update(rest);
    if (!n) throw new NotFound(`${what} not found`);
    return n;
  }

  /** Deletes the tenant's rows matching `where`; 404 when none match. */
  async delete(table: string, where: Row, what = 'Object'): Promise<number> {
    const n = await this.db(table).where(where).andWhere('tenant_id', this.tenantId).delete();
    if (!n) throw new NotFound(`${what} not found`);
    return n;
  }
}

/** The caller's own tenant. */
export function tenantScope(db: Db, caller: Caller): TenantScope {
  return new TenantScope(db, caller.tenantId);
}

/**
 * The scope of a tenant a request names: the caller's own, or (for admins only) any
 * tenant. A non-admin naming another tenant gets the same 404 as a tenant that does not
 * exist, so tenant ids cannot be probed.
 */
export function namedTenantScope(db: Db, caller: Caller, tenantId: string, what = 'Tenant'): TenantScope {
  if (tenantId !== caller.tenantId && caller.role !== 'admin') throw new NotFound(`${what} not found`);
  return new TenantScope(db, tenantId);
}
