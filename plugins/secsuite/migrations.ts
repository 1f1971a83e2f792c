import type { Knex } from 'knex';
import type { Migration } from '../../core/db';

const common = (t: Knex.CreateTableBuilder) => {
  t.string('id', 36).primary();
  t.string('tenant_id', 64).notNullable();
  t.string('created_at', 32).notNullable();
};

export const secsuiteMigrations: Migration[] = [
  {
    name: '001_endpointsec',
    async up(db) {
      await db.schema.createTable('endpointsec_keys', (t) => {
        common(t);
        t.string('name', 128).notNullable();
        t.string('key_hash', 64).notNullable().unique();
        t.string('hint', 16).notNullable();
        t.string('last_used_at', 32);
        t.string('revoked_at', 32);
        t.integer('refused_uses').notNullable().defaultTo(0);
      });
      // Events, detections and identity events pushed by agents or a vendor's forwarder.
      await db.schema.createTable('endpointsec_records', (t) => {
        common(t);
        t.string('kind', 16).notNullable();
        t.string('source', 128).notNullable();
        t.string('device_id', 128);
        t.string('identity', 320);
        t.string('type', 64).notNullable();
        t.string('severity', 16).notNullable();
        t.string('occurred_at', 32).notNullable();
        t.text('indicators').notNullable();
        t.text('data').notNullable();
        /** Indicator matches found for a detection (at ingest or by match-intelligence). */
        t.integer('intel_matches').notNullable().defaultTo(0);
        t.index(['tenant_id', 'kind', 'created_at']);
        t.index(['tenant_id', 'device_id']);
      });
      await db.schema.createTable('endpointsec_devices', (t) => {
        common(t);
        t.string('device_id', 128).notNullable();
        t.string('hostname', 256);
        t.string('address', 64);
        t.string('containment', 16).notNullable();
        t.string('last_seen_at', 32);
        t.string('updated_at', 32).notNullable();
        t.unique(['tenant_id', 'device_id']);
      });
      await db.schema.createTable('endpointsec_indicators', (t) => {
        common(t);
        t.string('type', 16).notNullable();
        t.string('value', 2048).notNullable();
        t.string('source', 128).notNullable();
        t.string('stix_id', 128);
        t.string('name', 256);
        t.text('labels').notNullable();
        t.string('valid_until', 32);
        t.index(['tenant_id', 'type', 'value']);
      });
    },
  },
  {
    name: '002_cloudsec',
    async up(db) {
      // Firewall rules, URL rules, DLP policies, application segments and access policies: one shape, a kind.
      await db.schema.createTable('cloudsec_objects', (t) => {
        common(t);
        t.string('kind', 16).notNullable();
        t.string('name', 200).notNullable();
        t.integer('ord').notNullable();
        t.string('origin', 16).notNullable();
        t.text('body').notNullable();
        t.string('updated_at', 32).notNullable();
        t.index(['tenant_id', 'kind']);
      });
      await db.schema.createTable('cloudsec_logs', (t) => {
        common(t);
        t.string('at', 32).notNullable();
        t.string('user', 320);
        t.string('app', 200);
        t.string('source_ip', 64).notNullable();
        t.string('destination', 512);
        t.integer('port');
        t.string('protocol', 8).notNullable();
        t.string('rule_id', 36);
        t.string('decision', 8).notNullable();
        t.bigInteger('bytes').notNullable();
        t.index(['tenant_id', 'created_at']);
        t.index(['tenant_id', 'rule_id']);
      });
    },
  },
  {
    name: '003_netsec',
    async up(db) {
      await db.schema.createTable('netsec_zones', (t) => {
        common(t);
        t.string('name', 128).notNullable();
        t.string('description', 1000).notNullable();
        t.string('kind', 16).notNullable();
        t.text('members').notNullable();
        t.string('updated_at', 32).notNullable();
        t.unique(['tenant_id', 'name']);
      });
      await db.schema.createTable('netsec_policies', (t) => {
        common(t);
        t.string('name', 128).notNullable();
        t.text('body').notNullable();
        t.integer('priority').notNullable();
        t.string('updated_at', 32).notNullable();
      });
      await db.schema.createTable('netsec_policy_sets', (t) => {
        common(t);
        t.integer('version').notNullable();
        t.boolean('active').notNullable();
        t.text('policies').notNullable();
        t.text('diff').notNullable();
        t.string('applied_by', 64).notNullable();
        t.unique(['tenant_id', 'version']);
      });
      await db.schema.createTable('netsec_providers', (t) => {
        common(t);
        t.string('name', 128).notNullable();
        t.string('adapter', 16).notNullable();
        t.string('url', 2048);
        t.text('addresses').notNullable();
        t.boolean('carrier').notNullable();
      });
      await db.schema.createTable('netsec_sip_messages', (t) => {
        common(t);
        t.string('connection_id', 128).notNullable();
        t.string('source_ip', 64).notNullable();
        t.string('method', 16);
        t.integer('status');
        t.string('cseq_method', 16);
        t.string('call_id', 256);
        t.string('from_uri', 512);
        t.string('to_uri', 512);
        t.string('user_agent', 256);
        t.string('received_at', 32).notNullable();
        t.float('latency_ms');
        t.index(['tenant_id', 'connection_id', 'received_at']);
        t.index(['tenant_id', 'call_id']);
      });
      await db.schema.createTable('netsec_healing_runs', (t) => {
        common(t);
        t.string('mode', 16).notNullable();
        t.text('proposals').notNullable();
        t.string('actor', 64).notNullable();
      });
    },
  },
];
