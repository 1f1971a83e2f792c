import type { Migration } from '../../core/db';
import { jobColumns } from '../../core/migration-helpers';

export { JOB_FINISHED, JOB_STATES, type JobState } from '../../core/jobs';

export const aiopsMigrations: Migration[] = [
  {
    name: '001_aiops',
    async up(db) {
      await db.schema.createTable('aiops_models', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('name', 128).notNullable();
        t.string('version', 64).notNullable();
        t.string('provider', 64).notNullable();
        t.string('task', 64).notNullable();
        t.string('endpoint', 2048);
        t.string('kernel', 64);
        // Prices per million tokens in micro-units of the currency.
        t.bigInteger('input_price_micros').notNullable();
        t.bigInteger('output_price_micros').notNullable();
        t.string('currency', 3).notNullable();
        t.text('parameters');
        t.string('training_job_id', 36);
        t.string('created_by', 128).notNullable();
        t.string('created_at', 32).notNullable();
        t.string('updated_at', 32).notNullable();
        t.unique(['tenant_id', 'name', 'version']);
        t.index(['tenant_id', 'created_at']);
      });
      await db.schema.createTable('aiops_training_jobs', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('model_name', 128).notNullable();
        t.string('kind', 16).notNullable();
        t.text('spec').notNullable();
        t.integer('epochs_done').notNullable();
        t.text('metrics').notNullable();
        t.string('model_id', 36);
        t.string('created_at', 32).notNullable();
        t.index(['tenant_id', 'created_at']);
        jobColumns(t);
        t.index(['state']);
      });
      await db.schema.createTable('aiops_costs', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('model', 128);
        t.string('provider', 64).notNullable();
        t.bigInteger('amount_micros').notNullable();
        t.string('currency', 3).notNullable();
        t.bigInteger('input_tokens');
        t.bigInteger('output_tokens');
        t.string('description', 500);
        // A client's Idempotency-Key: a retried record is stored once.
        t.string('idempotency_key', 128);
        t.string('occurred_at', 32).notNullable();
        t.string('created_by', 128).notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['tenant_id', 'occurred_at']);
        t.unique(['tenant_id', 'idempotency_key']);
      });
      await db.schema.createTable('aiops_budgets', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('name', 200).notNullable();
        t.string('period', 8).notNullable();
        t.bigInteger('amount_micros').notNullable();
        t.string('currency', 3).notNullable();
        t.string('model', 128);
        t.string('provider', 64);
        t.text('thresholds').notNullable();
        t.string('created_by', 128).notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['tenant_id', 'created_at']);
      });
      await db.schema.createTable('aiops_cost_alerts', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('budget_id', 36).notNullable();
        t.string('kind', 16).notNullable();
        t.double('threshold').notNullable();
        t.string('period_start', 32).notNullable();
        t.bigInteger('spend_micros').notNullable();
        t.bigInteger('forecast_micros').notNullable();
        t.bigInteger('budget_micros').notNullable();
        t.string('currency', 3).notNullable();
        t.string('created_at', 32).notNullable();
        // One alert per budget, period, kind and threshold: a crossing is raised once.
        t.unique(['budget_id', 'period_start', 'kind', 'threshold']);
        t.index(['tenant_id', 'created_at']);
      });
    },
  },
];

export const json = (s: string | null | undefined) => (s === null || s === undefined ? null : JSON.parse(s));
