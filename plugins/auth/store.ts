import crypto from 'node:crypto';
import { PLATFORM_TENANT } from '../../core/auth/store';
import type { Config } from '../../core/config';
import type { AccountUser } from '../../core/contracts/accounts';
import { nowIso, type Db, type Migration } from '../../core/db';
import type { Role } from '../../core/roles';
import { hashPassword } from './passwords';

/**
 * Refresh-token sessions and reset tokens. This was core's `003_auth_tokens` (with the
 * revocation list and the mail outbox, which core keeps and makes in its own migrations).
 */
export const authMigrations: Migration[] = [{
  name: '003_auth_tokens',
  async up(db) {
    await db.schema.createTable('refresh_tokens', (t) => {
      t.string('id', 36).primary();
      /** One login = one family; every rotation stays in it; a reused token revokes it whole. */
      t.string('family_id', 36).notNullable();
      t.string('user_id', 36).notNullable();
      t.string('tenant_id', 64).notNullable();
      t.string('token_hash', 64).notNullable().unique();
      t.string('access_jti', 36).notNullable();
      t.bigInteger('access_exp').notNullable();
      t.bigInteger('expires_at').notNullable();
      t.string('used_at', 32);
      t.string('revoked_at', 32);
      t.string('created_at', 32).notNullable();
      t.index(['family_id']);
      t.index(['user_id']);
      t.index(['access_jti']);
    });
    await db.schema.createTable('password_resets', (t) => {
      t.string('id', 36).primary();
      t.string('user_id', 36).notNullable();
      t.string('tenant_id', 64).notNullable();
      t.string('token_hash', 64).notNullable().unique();
      t.bigInteger('expires_at').notNullable();
      t.string('used_at', 32);
      t.string('created_at', 32).notNullable();
      t.index(['user_id']);
    });
  },
}];

export interface UserRow extends AccountUser {
  password_hash: string;
}

/** The user a row describes, as login and /auth/me show it (never the hash). */
export function publicUser(u: Pick<AccountUser, 'id' | 'email' | 'name' | 'role' | 'tenant_id' | 'created_at'>) {
  return { id: u.id, email: u.email, name: u.name, role: u.role, tenant_id: u.tenant_id, created_at: u.created_at };
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db<UserRow>('users').where({ email: email.toLowerCase() }).first();
}

export async function createUser(
  db: Db,
  u: { tenantId: string; email: string; name: string; role: Role; password: string },
): Promise<UserRow> {
  const now = nowIso();
  const row: UserRow = {
    id: crypto.randomUUID(),
    tenant_id: u.tenantId,
    email: u.email.toLowerCase(),
    name: u.name,
    role: u.role,
    password_hash: await hashPassword(u.password),
    created_at: now,
    updated_at: now,
  };
  await db('users').insert(row);
  return row;
}

/**
 * On the first start (no users yet) creates the platform tenant and an admin, and returns
 * the credentials so that the caller can print them once. Later starts return null.
 */
export async function bootstrapAdmin(db: Db, config: Config): Promise<{ email: string; password: string } | null> {
  const existing = await db('users').first('id');
  if (existing) return null;
  const password = config.auth.adminPassword ?? crypto.randomBytes(18).toString('base64url');
  await db.transaction(async (trx) => {
    const tenant = await trx('tenants').where({ id: PLATFORM_TENANT }).first('id');
    if (!tenant) {
      await trx('tenants').insert({ id: PLATFORM_TENANT, name: 'Platform', plan: 'enterprise', domains: '[]', created_at: nowIso() });
    }
    await createUser(trx, { tenantId: PLATFORM_TENANT, email: config.auth.adminEmail, name: 'Administrator', role: 'admin', password });
  });
  return { email: config.auth.adminEmail.toLowerCase(), password };
}
