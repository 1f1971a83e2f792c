import type { Migration } from '../../core/db';
import { jobColumns } from '../../core/migration-helpers';

export const uaicpMigrations: Migration[] = [
  {
    name: '001_uaicp',
    async up(db) {
      await db.schema.createTable('uaicp_policies', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('kind', 16).notNullable(); // placement | value
        t.string('name', 200).notNullable();
        t.string('workload_type', 64);
        t.text('rules').notNullable();
        t.string('created_by', 128).notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['tenant_id', 'kind', 'created_at']);
      });
      await db.schema.createTable('uaicp_workloads', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('workload_type', 64).notNullable();
        t.string('kernel', 64).notNullable();
        t.text('requirements').notNullable();
        t.string('objective', 16).notNullable();
        t.string('provider', 32).notNullable();
        t.string('region', 64).notNullable();
        t.string('node_id', 96);
        t.double('latency_p95_ms');
        // Estimated cost of one unit at the chosen place, micro-units of `currency`; null without a price.
        t.bigInteger('cost_micros');
        t.string('currency', 3);
        t.text('candidates').notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['tenant_id', 'created_at']);
      });
      await db.schema.createTable('uaicp_jobs', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('kind', 32).notNullable(); // benchmark | optimize | workflow
        t.text('input').notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['tenant_id', 'kind', 'created_at']);
        jobColumns(t);
        t.index(['state']);
      });
      await db.schema.createTable('uaicp_reservations', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('kernel', 64).notNullable();
        t.string('state', 16).notNullable(); // active | released
        t.text('nodes').notNullable();
        // The whole answer, so that a retry with the same Idempotency-Key gets it again.
        t.text('answer').notNullable();
        t.string('idempotency_key', 128);
        t.string('created_by', 128).notNullable();
        t.string('created_at', 32).notNullable();
        t.string('released_at', 32);
        t.index(['tenant_id', 'created_at']);
        t.unique(['tenant_id', 'idempotency_key']);
      });
    },
  },
];

export const parse = (s: string | null | undefined) => (s === null || s === undefined ? null : JSON.parse(s));
