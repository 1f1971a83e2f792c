import crypto from 'node:crypto';
import type { Config } from '../config';
import { nowIso, type Db, type Migration } from '../db';
import type { Role } from '../roles';
import { hashPassword } from './passwords';

/** The tenant that owns the platform's own staff (the first admin). */
export const PLATFORM_TENANT = 'platform';

export const coreMigrations: Migration[] = [
  {
    name: '001_tenants_users',
    async up(db) {
      await db.schema.createTable('tenants', (t) => {
        t.string('id', 64).primary();
        t.string('name', 200).notNullable();
        t.string('plan', 64).notNullable();
        t.text('domains').notNullable().defaultTo('[]');
        t.string('created_at', 32).notNullable();
      });
      await db.schema.createTable('users', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable().references('tenants.id');
        t.string('email', 320).notNullable().unique();
        t.string('name', 200).notNullable();
        t.string('role', 16).notNullable();
        t.text('password_hash').notNullable();
        t.string('created_at', 32).notNullable();
        t.string('updated_at', 32).notNullable();
        t.index(['tenant_id']);
      });
    },
  },
];

export interface UserRow {
  id: string;
  tenant_id: string;
  email: string;
  name: string;
  role: Role;
  password_hash: string;
  created_at: string;
  updated_at: string;
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
