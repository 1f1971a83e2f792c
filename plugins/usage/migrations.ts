import type { Migration } from '../../core/db';

export const usageMigrations: Migration[] = [
  {
    name: '001_usage',
    async up(db) {
      // One row per tenant, key ('' = none), metric, dimension and hour; batches add to quantity.
      await db.schema.createTable('usage_counters', (t) => {
        t.string('tenant_id', 64).notNullable();
        t.string('key_id', 36).notNullable();
        t.string('metric', 32).notNullable();
        t.string('dimension', 128).notNullable();
        t.string('hour', 13).notNullable();
        t.double('quantity').notNullable();
        t.primary(['tenant_id', 'key_id', 'metric', 'dimension', 'hour']);
        t.index(['hour']);
      });
      await db.schema.createTable('feature_overrides', (t) => {
        t.string('tenant_id', 64).notNullable();
        t.string('feature', 64).notNullable();
        t.boolean('enabled').notNullable();
        t.string('updated_by', 128).notNullable();
        t.string('updated_at', 32).notNullable();
        t.primary(['tenant_id', 'feature']);
      });
      await db.schema.createTable('tenant_addons', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('sku', 64).notNullable();
        t.string('started_at', 32).notNullable();
        t.string('ended_at', 32);
        t.index(['tenant_id']);
      });
    },
  },
];
