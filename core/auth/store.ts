import type { Migration } from '../db';

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

/**
 * The revocation list the token check reads. Older databases have it from the migration
 * that is now `auth/003_auth_tokens` (it was core's): it is made only where missing.
 */
coreMigrations.push({
  name: '005_revoked_tokens',
  async up(db) {
    if (await db.schema.hasTable('revoked_tokens')) return;
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
  },
});
