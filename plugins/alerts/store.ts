import type { Migration } from '../../core/db';

/** Bus event types a subscription may name ('*' for all of them). */
export const EVENT_TYPES = [
  '*',
  'incident',
  'action_taken',
  'health_update',
  'breaker_state',
  'node_state',
  'kernel_state',
  'drain_progress',
  'workflow_status',
  'chaos_experiment',
  'cost_alert',
  'training_job',
  'uaicp_job',
] as const;

export interface Subscription {
  id: string;
  tenant_id: string;
  url: string;
  event_types: string[];
  description: string | null;
  /** `json`: our own envelope; `cloudevents`: a CloudEvent 1.0 in structured JSON mode. */
  format: 'json' | 'cloudevents';
  /** Signing key; shown once at creation, never listed. */
  secret: string;
  created_by: string;
  created_at: string;
}

export interface Attempt {
  id: string;
  delivery_id: string;
  subscription_id: string;
  tenant_id: string;
  event_type: string;
  event_timestamp: string;
  attempt: number;
  status: 'succeeded' | 'failed';
  response_status: number | null;
  error: string | null;
  duration_ms: number;
  /** When the next attempt is due, or null when this was the last one. */
  next_attempt_at: string | null;
  created_at: string;
}

export const alertMigrations: Migration[] = [
  {
    name: '001_alerts',
    async up(db) {
      await db.schema.createTable('alert_subscriptions', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.text('url').notNullable();
        t.text('event_types').notNullable();
        t.text('description');
        t.string('secret', 128).notNullable();
        t.string('created_by', 128).notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['tenant_id']);
      });
      await db.schema.createTable('alert_deliveries', (t) => {
        t.string('id', 36).primary();
        t.string('delivery_id', 36).notNullable();
        t.string('subscription_id', 36).notNullable();
        t.string('tenant_id', 64).notNullable();
        t.string('event_type', 64).notNullable();
        t.string('event_timestamp', 32).notNullable();
        t.integer('attempt').notNullable();
        t.string('status', 16).notNullable();
        t.integer('response_status');
        t.text('error');
        t.float('duration_ms').notNullable();
        t.string('next_attempt_at', 32);
        t.string('created_at', 32).notNullable();
        t.index(['subscription_id', 'created_at']);
      });
    },
  },
  {
    name: '002_alert_format',
    async up(db) {
      await db.schema.alterTable('alert_subscriptions', (t) => {
        t.string('format', 16).notNullable().defaultTo('json');
      });
    },
  },
];

export function toSubscription(r: Record<string, unknown>): Subscription {
  return { ...(r as unknown as Subscription), event_types: JSON.parse(r.event_types as string) as string[] };
}
