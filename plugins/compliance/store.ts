import type { Migration } from '../../core/db';
import { CONTROLS } from './controls';

export const complianceMigrations: Migration[] = [
  {
    name: '001_compliance',
    async up(db) {
      // The controls are data: a deployment can change a parameter (e.g. unused_days) in the table.
      await db.schema.createTable('compliance_controls', (t) => {
        t.string('id', 64).primary();
        t.string('framework', 16).notNullable();
        t.string('criterion', 16).notNullable();
        t.text('title').notNullable();
        t.text('description').notNullable();
        t.text('parameters').notNullable();
      });
      await db('compliance_controls').insert(CONTROLS.map((c) => ({ ...c, parameters: JSON.stringify(c.parameters) })));
      await db.schema.createTable('compliance_results', (t) => {
        t.string('id', 36).primary();
        t.string('run_id', 36).notNullable();
        t.string('tenant_id', 64).notNullable();
        t.string('control_id', 64).notNullable();
        t.string('status', 16).notNullable();
        t.text('evidence').notNullable();
        t.string('verified_by', 128).notNullable();
        t.string('verified_at', 32).notNullable();
        t.index(['tenant_id', 'control_id', 'verified_at']);
      });
    },
  },
];
