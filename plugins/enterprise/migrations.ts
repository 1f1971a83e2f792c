import { resourceStamps as stamps, tenantResource as base, type Migration } from '../../core/db';

export const enterpriseMigrations: Migration[] = [
  {
    name: '001_enterprise',
    async up(db) {
      await db.schema.createTable('enterprise_processes', (t) => {
        base(t);
        t.string('name', 200).notNullable();
        t.string('workflow_id', 36).notNullable();
        t.string('department', 64).notNullable();
        t.text('owners').notNullable();
        t.integer('sla_seconds').notNullable();
        t.string('created_by', 128).notNullable();
        stamps(t);
        t.index(['tenant_id', 'department']);
      });
      await db.schema.createTable('enterprise_process_runs', (t) => {
        base(t);
        t.string('process_id', 36).notNullable();
        t.string('execution_id', 36).notNullable();
        t.string('state', 16).notNullable();
        t.boolean('sla_met');
        t.double('duration_ms');
        t.string('due_at', 32).notNullable();
        t.string('finished_at', 32);
        t.string('created_by', 128).notNullable();
        stamps(t);
        t.index(['tenant_id', 'process_id']);
      });
      await db.schema.createTable('enterprise_memory', (t) => {
        base(t);
        t.string('kind', 16).notNullable();
        t.string('title', 300).notNullable();
        t.text('content').notNullable();
        // Tags as a JSON array text, plus a "|tag1|tag2|" form for exact-tag filtering with LIKE.
        t.text('tags').notNullable();
        t.text('tag_index').notNullable();
        t.string('department', 64);
        t.string('created_by', 128).notNullable();
        stamps(t);
      });
      await db.schema.createTable('enterprise_optimizations', (t) => {
        base(t);
        t.string('state', 16).notNullable();
        t.text('inputs').notNullable();
        t.text('result');
        t.text('error');
        t.string('created_by', 128).notNullable();
        t.string('finished_at', 32);
        stamps(t);
      });
      await db.schema.createTable('enterprise_feedback', (t) => {
        base(t);
        t.string('subject_type', 32).notNullable();
        t.string('subject_id', 36).notNullable();
        t.integer('rating').notNullable();
        t.text('comment');
        t.string('created_by', 128).notNullable();
        stamps(t);
      });
      await db.schema.createTable('enterprise_scaling', (t) => {
        base(t);
        t.string('kernel_id', 64).notNullable();
        t.integer('current_nodes').notNullable();
        t.integer('recommended_nodes').notNullable();
        t.text('forecast').notNullable();
        t.string('state', 24).notNullable();
        t.string('approval_id', 36);
        t.text('detail');
        t.string('created_by', 128).notNullable();
        stamps(t);
      });
    },
  },
];
