// plugins/__NAME__/migrations.ts: the tables this plugin owns. Never edit a migration once it
// has run anywhere (the host refuses to start when an applied one changed): add the next
// numbered one (002_..., 003_...) instead.
import type { Migration } from '../../core/db';

export const __CAMEL__Migrations: Migration[] = [
  {
    name: '001_entries',
    up: async (db) => {
      await db.schema.createTable('__SNAKE___entries', (t) => {
        t.string('id').primary();
        t.string('tenant_id').notNullable();
        t.string('title').notNullable();
        t.text('body').notNullable();
        t.string('created_by').notNullable();
        t.string('created_at').notNullable();
        t.index(['tenant_id', 'created_at']);
      });
    },
  },
];
