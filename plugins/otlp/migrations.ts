// The receiver's own tables: GenAI metric points, log records, and a count of every metric
// series received (stored or not). Spans go to the telemetry event store.
import type { Migration } from '../../core/db';

export const otlpMigrations: Migration[] = [
  {
    name: '001_points_logs_series',
    async up(db) {
      await db.schema.createTable('otlp_metric_points', (t) => {
        t.string('tenant_id', 64).notNullable();
        // A hash of the point's content: the same point sent again is stored once.
        t.string('id', 32).notNullable();
        t.string('name', 255).notNullable();
        t.string('ts', 32).notNullable();
        t.string('start_ts', 32);
        t.string('kind', 24).notNullable();
        t.string('unit', 64);
        t.string('service', 128);
        t.double('value');
        t.bigInteger('count');
        t.double('min');
        t.double('max');
        t.text('data').notNullable();
        t.primary(['tenant_id', 'id']);
        t.index(['tenant_id', 'name', 'ts']);
      });
      await db.schema.createTable('otlp_log_records', (t) => {
        t.string('tenant_id', 64).notNullable();
        t.string('id', 32).notNullable();
        t.string('ts', 32).notNullable();
        t.string('trace_id', 32);
        t.string('span_id', 16);
        t.integer('severity_number');
        t.string('severity_text', 64);
        t.string('event_name', 255);
        t.string('service', 128);
        t.text('body');
        t.text('data').notNullable();
        t.primary(['tenant_id', 'id']);
        t.index(['tenant_id', 'ts']);
        t.index(['tenant_id', 'trace_id']);
      });
      await db.schema.createTable('otlp_metric_series', (t) => {
        t.string('tenant_id', 64).notNullable();
        t.string('name', 255).notNullable();
        t.string('kind', 24).notNullable();
        t.string('unit', 64);
        t.boolean('stored').notNullable();
        t.bigInteger('points').notNullable();
        t.string('first_seen_at', 32).notNullable();
        t.string('last_seen_at', 32).notNullable();
        t.primary(['tenant_id', 'name']);
      });
    },
  },
];
