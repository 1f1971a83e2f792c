import type { Migration } from '../../core/db';

export const securityMigrations: Migration[] = [
  {
    name: '001_security',
    async up(db) {
      await db.schema.createTable('security_events', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64);
        t.string('source', 32).notNullable();
        t.string('category', 64).notNullable();
        t.string('severity', 16).notNullable();
        t.string('actor', 320);
        t.string('address', 64);
        t.string('kernel_id', 64);
        t.text('attributes').notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['tenant_id', 'created_at']);
        t.index(['category', 'created_at']);
      });
      await db.schema.createTable('security_findings', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64);
        t.string('rule_id', 64).notNullable();
        t.integer('rule_version').notNullable();
        t.string('title', 200).notNullable();
        t.string('severity', 16).notNullable();
        t.string('subject', 320).notNullable();
        t.string('state', 16).notNullable();
        t.text('evidence').notNullable();
        t.string('first_evidence_at', 32).notNullable();
        t.string('created_at', 32).notNullable();
        t.string('updated_at', 32).notNullable();
        t.string('acknowledged_at', 32);
        t.string('resolved_at', 32);
        t.string('resolved_by', 36);
        t.index(['tenant_id', 'created_at']);
        t.index(['rule_id', 'subject', 'state']);
      });
      await db.schema.createTable('security_actions', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64);
        t.string('action', 64).notNullable();
        t.string('target_type', 32).notNullable();
        t.string('target_id', 320).notNullable();
        t.string('trigger', 16).notNullable();
        t.string('finding_id', 36);
        t.string('actor', 128).notNullable();
        t.string('result', 16).notNullable();
        t.text('detail').notNullable();
        t.boolean('undoable').notNullable();
        t.string('undone_at', 32);
        t.string('created_at', 32).notNullable();
        t.index(['tenant_id', 'created_at']);
      });
      // A user the platform refuses: `locked` until a time (brute force), or `disabled` until undone.
      await db.schema.createTable('security_user_blocks', (t) => {
        t.string('user_id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('kind', 16).notNullable();
        t.string('until', 32);
        t.string('action_id', 36).notNullable();
        t.string('created_at', 32).notNullable();
      });
      await db.schema.createTable('security_predictive_runs', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('state', 16).notNullable();
        t.text('params').notNullable();
        t.text('result');
        t.text('error');
        t.string('created_at', 32).notNullable();
        t.string('updated_at', 32).notNullable();
      });
      await db.schema.createTable('security_predictive_alerts', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('run_id', 36).notNullable();
        t.string('category', 64).notNullable();
        t.string('severity', 16).notNullable();
        t.float('threshold').notNullable();
        t.float('predicted_peak').notNullable();
        t.string('crosses_at', 32).notNullable();
        t.text('model').notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['tenant_id', 'created_at']);
      });
    },
  },
];
