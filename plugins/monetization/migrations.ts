import type { Migration } from '../../core/db';

export const monetizationMigrations: Migration[] = [
  {
    name: '001_monetization',
    async up(db) {
      // API keys: only a SHA-256 of the secret is kept (the secret is 256 random bits).
      await db.schema.createTable('api_keys', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('name', 128).notNullable();
        t.string('prefix', 16).notNullable();
        t.string('key_hash', 64).notNullable().unique();
        t.text('scopes').notNullable();
        t.integer('rate_limit_per_minute').notNullable();
        t.string('expires_at', 32);
        t.string('revoked_at', 32);
        t.string('last_used_at', 32);
        t.string('created_by', 128).notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['tenant_id', 'created_at']);
      });
      await db.schema.createTable('ledger_transactions', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('kind', 16).notNullable();
        t.string('currency', 3).notNullable();
        t.bigInteger('amount').notNullable();
        t.string('reference_type', 32);
        t.string('reference_id', 64);
        t.text('memo').notNullable();
        t.text('detail').notNullable();
        t.string('idempotency_key', 255);
        t.string('request_hash', 64);
        t.string('created_at', 32).notNullable();
        // A retried payment with the same key finds the first one; the database refuses a second.
        t.unique(['tenant_id', 'idempotency_key']);
        t.index(['tenant_id', 'created_at']);
        t.index(['reference_type', 'reference_id']);
      });
      await db.schema.createTable('ledger_entries', (t) => {
        t.bigIncrements('seq').primary();
        t.string('transaction_id', 36).notNullable().references('ledger_transactions.id');
        t.string('tenant_id', 64).notNullable();
        t.string('account', 100).notNullable();
        t.bigInteger('amount').notNullable();
        t.string('currency', 3).notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['account', 'created_at']);
        t.index(['tenant_id', 'created_at']);
        t.index(['transaction_id']);
      });
      await db.schema.createTable('marketplace_items', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('kind', 16).notNullable();
        t.string('name', 200).notNullable();
        t.text('description').notNullable();
        t.string('workflow_id', 36);
        t.string('kernel', 64);
        t.string('task', 64);
        // What runs: the workflow's steps, or one task with its default input, fixed at publish time.
        t.text('steps').notNullable();
        t.bigInteger('price_per_run').notNullable();
        t.string('currency', 3).notNullable();
        t.string('state', 16).notNullable();
        t.string('review_note', 500);
        t.string('reviewed_by', 128);
        t.string('created_by', 128).notNullable();
        t.string('created_at', 32).notNullable();
        t.string('updated_at', 32).notNullable();
        t.string('published_at', 32);
        t.index(['state', 'created_at']);
        t.index(['tenant_id', 'created_at']);
        t.index(['workflow_id']);
      });
      await db.schema.createTable('marketplace_runs', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('item_id', 36).notNullable();
        t.string('publisher_tenant_id', 64).notNullable();
        t.string('key_id', 36);
        t.string('state', 16).notNullable();
        t.text('error');
        t.double('duration_ms').notNullable();
        t.bigInteger('charged').notNullable();
        t.string('currency', 3).notNullable();
        t.string('transaction_id', 36);
        t.string('idempotency_key', 255);
        t.text('output');
        t.string('created_at', 32).notNullable();
        t.unique(['tenant_id', 'idempotency_key']);
        t.index(['item_id', 'created_at']);
        t.index(['created_at']);
      });
      // A closed period's invoice, frozen the first time it is asked for after the period ends.
      await db.schema.createTable('invoices', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('period', 7).notNullable();
        t.text('document').notNullable();
        t.string('transaction_id', 36);
        t.string('created_at', 32).notNullable();
        t.unique(['tenant_id', 'period']);
      });
    },
  },
];
