import { resourceStamps as stamps, tenantResource as base, type Migration } from '../../core/db';

// JSON documents (evidence, steps, canary arms) are text columns read and written whole.
export const autonomousMigrations: Migration[] = [
  {
    name: '001_autonomous',
    async up(db) {
      await db.schema.createTable('autonomous_scans', (t) => {
        base(t);
        t.string('state', 16).notNullable();
        t.integer('window_seconds').notNullable();
        t.integer('found');
        t.text('error');
        t.string('created_by', 128).notNullable();
        t.string('started_at', 32);
        t.string('finished_at', 32);
        stamps(t);
      });
      await db.schema.createTable('autonomous_opportunities', (t) => {
        base(t);
        t.string('scan_id', 36).notNullable();
        t.string('kind', 32).notNullable();
        t.string('fingerprint', 200).notNullable();
        t.text('title').notNullable();
        t.text('evidence').notNullable();
        t.text('saving').notNullable();
        stamps(t);
        t.unique(['tenant_id', 'fingerprint']);
      });
      await db.schema.createTable('autonomous_skills', (t) => {
        base(t);
        t.string('opportunity_id', 36).notNullable();
        t.string('kind', 16).notNullable();
        t.string('name', 200).notNullable();
        t.string('workflow_id', 36);
        t.text('steps').notNullable();
        t.text('inputs').notNullable();
        t.string('created_by', 128).notNullable();
        stamps(t);
      });
      await db.schema.createTable('autonomous_agents', (t) => {
        base(t);
        t.string('skill_id', 36).notNullable();
        t.string('name', 200).notNullable();
        t.string('state', 16).notNullable();
        t.string('role', 16).notNullable();
        t.integer('schedule_seconds').notNullable();
        t.text('inputs').notNullable();
        t.integer('runs').notNullable().defaultTo(0);
        t.string('last_run_at', 32);
        t.text('last_result');
        t.string('created_by', 128).notNullable();
        t.string('deployed_by', 128);
        t.string('deployed_at', 32);
        stamps(t);
      });
      await db.schema.createTable('autonomous_variants', (t) => {
        base(t);
        t.string('workflow_id', 36).notNullable();
        t.string('state', 16).notNullable();
        t.text('changes').notNullable();
        t.text('steps').notNullable();
        t.text('baseline_steps').notNullable();
        t.text('canary');
        t.string('created_by', 128).notNullable();
        stamps(t);
      });
    },
  },
  {
    // The finished runs a live canary collected (routed by the workflows plugin's run router).
    name: '002_canary_runs',
    async up(db) {
      await db.schema.createTable('autonomous_canary_runs', (t) => {
        t.string('execution_id', 36).primary();
        t.string('variant_id', 36).notNullable();
        t.string('tenant_id', 64).notNullable();
        t.string('arm', 16).notNullable();
        // The finished execution, as the evaluation reads it.
        t.text('execution').notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['variant_id']);
      });
    },
  },
];
