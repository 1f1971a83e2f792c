import type { Knex } from 'knex';
import type { Migration } from '../../core/db';

// Tables of the automation plugin. JSON columns are text (portable across SQLite and PostgreSQL).
const stamps = (t: Knex.CreateTableBuilder) => {
  t.string('created_at', 32).notNullable();
  t.string('updated_at', 32).notNullable();
};

export const automationMigrations: Migration[] = [
  {
    name: '001_automation',
    async up(db) {
      // Encrypted secrets of the plugin: the local CA's key, the ACME account key.
      await db.schema.createTable('automation_secrets', (t) => {
        t.string('name', 64).primary();
        t.text('public_pem');
        t.text('sealed').notNullable();
        t.string('created_at', 32).notNullable();
      });
      await db.schema.createTable('automation_certificates', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.text('names').notNullable();
        t.string('issuer_kind', 16).notNullable();
        t.string('state', 16).notNullable();
        t.text('subject');
        t.text('issuer');
        t.string('serial', 128);
        t.string('not_before', 32);
        t.string('not_after', 32);
        t.string('fingerprint', 128);
        t.text('cert_pem');
        t.text('chain_pem');
        t.text('key_sealed');
        t.integer('renewals').notNullable().defaultTo(0);
        t.string('renewed_at', 32);
        t.text('error');
        stamps(t);
        t.index(['tenant_id', 'created_at']);
      });
      await db.schema.createTable('automation_acme_challenges', (t) => {
        t.string('token', 255).primary();
        t.text('key_authorization').notNullable();
        t.string('created_at', 32).notNullable();
      });
      // One row: whether HTTPS should be on and with which certificate (every host follows it).
      await db.schema.createTable('automation_https', (t) => {
        t.string('id', 16).primary();
        t.boolean('enabled').notNullable();
        t.string('cert_id', 36);
        t.string('enabled_by', 64);
        stamps(t);
      });
      await db.schema.createTable('automation_https_targets', (t) => {
        t.string('id', 36).primary();
        t.string('host', 255).notNullable();
        t.integer('port').notNullable();
        t.string('servername', 255);
        t.string('created_at', 32).notNullable();
      });
      await db.schema.createTable('automation_https_checks', (t) => {
        t.string('id', 36).primary();
        t.string('target', 300).notNullable();
        t.boolean('ok').notNullable();
        t.boolean('authorized').notNullable();
        t.float('days_left');
        t.string('protocol', 32);
        t.float('handshake_ms');
        t.text('error');
        t.string('checked_at', 32).notNullable();
        t.index(['target', 'checked_at']);
      });
      await db.schema.createTable('automation_deployments', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('kernel_id', 64).notNullable();
        t.string('state', 16).notNullable();
        t.text('target').notNullable();
        t.text('before');
        t.text('validation');
        t.text('steps').notNullable();
        t.text('reason');
        t.string('created_by', 64).notNullable();
        stamps(t);
        t.index(['tenant_id', 'created_at']);
      });
      await db.schema.createTable('automation_health_results', (t) => {
        t.string('id', 36).primary();
        t.string('target', 128).notNullable();
        t.string('kind', 16).notNullable();
        t.boolean('ok').notNullable();
        t.float('latency_ms');
        t.text('detail').notNullable();
        t.string('checked_at', 32).notNullable();
        t.index(['target', 'checked_at']);
      });
      await db.schema.createTable('automation_readiness', (t) => {
        t.string('id', 36).primary();
        t.boolean('ready').notNullable();
        t.text('checks').notNullable();
        t.string('created_by', 64).notNullable();
        t.string('created_at', 32).notNullable();
      });
      await db.schema.createTable('automation_scheduler', (t) => {
        t.string('id', 16).primary();
        t.boolean('running').notNullable();
        t.string('owner', 128);
        t.string('lease_until', 32);
        t.text('last_runs').notNullable();
        t.string('updated_at', 32).notNullable();
      });
      // Customers, onboarding flows and proof-of-value environments: the tenant they made is customer_tenant.
      await db.schema.createTable('automation_customers', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('kind', 16).notNullable();
        t.string('customer_tenant', 64).notNullable();
        t.string('name', 200).notNullable();
        t.string('state', 16).notNullable();
        t.text('spec').notNullable();
        t.text('steps').notNullable();
        t.text('reason');
        t.string('created_by', 64).notNullable();
        stamps(t);
        t.index(['kind', 'created_at']);
      });
      await db.schema.createTable('automation_quotas', (t) => {
        t.string('customer_tenant', 64).notNullable();
        t.string('domain', 64).notNullable();
        t.integer('max_concurrent').notNullable();
        t.integer('tasks_per_minute').notNullable();
        t.string('created_at', 32).notNullable();
        t.primary(['customer_tenant', 'domain']);
      });
      await db.schema.createTable('automation_upgrades', (t) => {
        t.string('id', 36).primary();
        t.string('kind', 16).notNullable();
        t.string('state', 16).notNullable();
        t.string('candidate', 128);
        t.text('report').notNullable();
        t.text('reason');
        t.string('created_by', 64).notNullable();
        stamps(t);
      });
    },
  },
  {
    name: '002_idempotency_keys',
    async up(db) {
      // A client's Idempotency-Key on provisioning calls: a retry answers the first result.
      for (const table of ['automation_certificates', 'automation_customers']) {
        await db.schema.alterTable(table, (t) => {
          t.string('idempotency_key', 200);
          t.unique(['tenant_id', 'idempotency_key']);
        });
      }
    },
  },
  {
    // The scheduler's lease moved to core.leases (name automation.scheduler).
    name: '010_scheduler_lease_moved',
    async up(db) {
      await db.schema.alterTable('automation_scheduler', (t) => {
        t.dropColumn('owner');
        t.dropColumn('lease_until');
      });
    },
  },
  {
    // The API key an onboarding made, sealed until its tenant takes it once (customers/keys.ts).
    name: '011_onboarding_key_reveals',
    async up(db) {
      await db.schema.createTable('automation_key_reveals', (t) => {
        t.string('key_id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.text('sealed');
        t.string('created_at', 32).notNullable();
        t.string('revealed_at', 32);
        t.string('revealed_by', 64);
      });
    },
  },
  {
    // A deployment may roll out new kernel settings (sealed: they may hold an API key).
    name: '012_deployment_settings',
    async up(db) {
      await db.schema.alterTable('automation_deployments', (t) => {
        t.text('settings_sealed');
        t.text('before_sealed');
      });
    },
  },
];
