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

/** Revocations, refresh-token sessions, reset tokens and the mail outbox. */
coreMigrations.push({
  name: '003_auth_tokens',
  async up(db) {
    await db.schema.createTable('revoked_tokens', (t) => {
      // A token id (jti), or `user:<id>` for "every token of this user issued before not_before".
      t.string('id', 80).primary();
      t.string('user_id', 36).notNullable();
      t.string('tenant_id', 64).notNullable();
      t.bigInteger('not_before');
      /** Epoch seconds after which the row is useless (the token would have expired). */
      t.bigInteger('expires_at').notNullable();
      t.string('created_at', 32).notNullable();
      t.index(['created_at']);
    });
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
    await db.schema.createTable('mail_outbox', (t) => {
      t.string('id', 36).primary();
      t.string('tenant_id', 64).notNullable();
      t.string('to_address', 320).notNullable();
      t.string('subject', 200).notNullable();
      t.text('body').notNullable();
      /** stored (no SMTP configured), sending, sent or failed. */
      t.string('status', 16).notNullable();
      t.text('error');
      t.string('created_at', 32).notNullable();
      t.string('sent_at', 32);
      t.index(['tenant_id', 'created_at']);
    });
  },
});

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

/** The user a row describes, as login and /auth/me show it (never the hash). */
export function publicUser(u: UserRow) {
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
