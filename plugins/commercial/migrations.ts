import type { Migration } from '../../core/db';
import { jobColumns } from '../../core/migration-helpers';

export const commercialMigrations: Migration[] = [
  {
    name: '001_commercial',
    async up(db) {
      await db.schema.createTable('sla_definitions', (t) => {
        t.string('tenant_id', 64).primary();
        t.double('availability').notNullable();
        t.double('latency_p95_ms').notNullable();
        t.double('support_response_minutes').notNullable();
        t.text('credits').notNullable();
        t.double('latency_credit_percent').notNullable();
        t.string('created_at', 32).notNullable();
        t.string('updated_at', 32).notNullable();
        t.string('updated_by', 128).notNullable();
      });
      await db.schema.createTable('provisioning_plans', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('state', 16).notNullable();
        t.text('spec').notNullable();
        t.text('steps').notNullable();
        t.integer('runs').notNullable();
        t.string('created_by', 128).notNullable();
        t.string('created_at', 32).notNullable();
        t.string('updated_at', 32).notNullable();
      });
      await db.schema.createTable('kernel_quotas', (t) => {
        t.string('tenant_id', 64).notNullable();
        t.string('kernel', 64).notNullable();
        t.bigInteger('tasks_per_day').notNullable();
        t.string('updated_at', 32).notNullable();
        t.primary(['tenant_id', 'kernel']);
      });
      await db.schema.createTable('roi_experiments', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('kind', 16).notNullable();
        t.text('spec').notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['tenant_id', 'created_at']);
        jobColumns(t);
      });
      await db.schema.createTable('compliance_exports', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('file', 300).notNullable();
        t.bigInteger('bytes').notNullable();
        t.string('sha256', 64).notNullable();
        t.text('manifest').notNullable();
        t.string('created_by', 128).notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['tenant_id', 'created_at']);
      });
    },
  },
];
