import type { Knex } from 'knex';
import type { Migration } from '../../core/db';
import { jobColumns } from '../../core/migration-helpers';

// JSON documents (a chain's evidence, a verdict, an iteration's steps) are text columns: they
// are always read and written whole with their row.
function stamps(t: Knex.CreateTableBuilder) {
  t.string('created_at', 32).notNullable();
  t.string('updated_at', 32).notNullable();
}

export const agiMigrations: Migration[] = [
  {
    name: '001_agi',
    async up(db) {
      await db.schema.createTable('agi_chains', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('agent_id', 64).notNullable();
        t.string('topic', 64).notNullable();
        t.text('summary').notNullable();
        t.text('body').notNullable();
        t.text('decision').notNullable();
        t.text('outcome');
        stamps(t);
        t.index(['tenant_id', 'created_at']);
        t.index(['tenant_id', 'agent_id']);
      });
      await db.schema.createTable('agi_agents', (t) => {
        t.string('id', 64).primary();
        t.string('tenant_id', 64);
        t.string('name', 200).notNullable();
        t.string('kind', 32).notNullable();
        t.text('description').notNullable();
        t.string('role', 16).notNullable();
        t.text('permissions').notNullable();
        t.string('state', 16).notNullable();
        stamps(t);
      });
      await db.schema.createTable('agi_approvals', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.text('action').notNullable();
        t.text('summary').notNullable();
        t.string('state', 16).notNullable();
        t.string('origin', 128).notNullable();
        t.string('requested_by', 128).notNullable();
        t.text('reason').notNullable();
        t.text('verdict').notNullable();
        t.string('chain_id', 36);
        t.string('decided_by', 128);
        t.string('decided_at', 32);
        t.text('comment');
        t.text('result');
        t.text('error');
        t.string('expires_at', 32).notNullable();
        stamps(t);
        t.index(['tenant_id', 'state', 'created_at']);
      });
      await db.schema.createTable('agi_loops', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('state', 16).notNullable();
        t.integer('interval_seconds').notNullable();
        t.integer('window_seconds').notNullable();
        t.string('started_by', 128).notNullable();
        t.string('stopped_at', 32);
        stamps(t);
        t.index(['tenant_id', 'state']);
      });
      await db.schema.createTable('agi_iterations', (t) => {
        t.string('id', 36).primary();
        t.string('loop_id', 36);
        t.string('tenant_id', 64).notNullable();
        t.string('trigger', 16).notNullable();
        t.text('kpis').notNullable();
        t.text('objectives').notNullable();
        t.text('decisions').notNullable();
        t.text('error');
        t.string('finished_at', 32);
        stamps(t);
        t.index(['tenant_id', 'created_at']);
        t.index(['loop_id', 'created_at']);
      });
      await db.schema.createTable('agi_sim_results', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('scenario_id', 128).notNullable();
        jobColumns(t);
        t.integer('seed').notNullable();
        t.text('inputs');
        stamps(t);
        t.index(['tenant_id', 'created_at']);
      });
    },
  },
];
