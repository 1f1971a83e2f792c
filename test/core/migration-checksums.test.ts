// The migration rule: an applied migration never changes. The host stores a checksum of each
// applied migration and refuses to start, naming it, when its code differs later.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Migration } from '../../core/db';
import { definePlugin } from '../../core/plugin';
import { REWRITTEN_MIGRATIONS } from '../../core/migration-helpers';
import { uaicpMigrations } from '../../plugins/uaicp/store';
import { dropSchema, eachDatabase, startHost } from '../helpers/host';

const plugin = (migrations: Migration[]) => definePlugin({ id: 'ledger', prefix: '/ledger', deps: {}, migrations, routes: () => [] });

const first: Migration = { name: '001_init', up: async (db) => void (await db.schema.createTable('ledger_a', (t) => t.string('id').primary())) };
const edited: Migration = { name: '001_init', up: async (db) => void (await db.schema.createTable('ledger_a', (t) => t.string('key').primary())) };
const next: Migration = { name: '002_more', up: async (db) => void (await db.schema.createTable('ledger_b', (t) => t.string('id').primary())) };

eachDatabase('migration checksums', (db) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-mig-'));
  const pgSchema = `t_${crypto.randomBytes(6).toString('hex')}`;
  const boot = (migrations: Migration[]) => startHost({ db, dataDir, pgSchema, plugins: [plugin(migrations)] });

  it('records the checksum of every applied migration', async () => {
    const t = await boot([first]);
    try {
      const rows = await t.host.services.db('schema_migration_checksums').where('name', 'like', 'ledger/%');
      expect(rows.map((r: { name: string; checksum: string }) => [r.name, r.checksum.length])).to.deep.equal([['ledger/001_init', 64]]);
    } finally {
      await t.stop();
    }
  });

  it('refuses to start when an applied migration was edited, naming it and the rule', async () => {
    let err: Error | null = null;
    await boot([edited]).then((t) => t.stop(), (e: Error) => (err = e));
    expect(err, 'the host started').to.not.equal(null);
    expect(err!.message).to.match(/^migration ledger\/001_init changed after it was applied to this database .*Never edit an applied migration: restore it and add the next numbered migration/);
  });

  it('starts with the migration restored and a next one added', async () => {
    const t = await boot([first, next]);
    try {
      expect(await t.host.services.db.schema.hasTable('ledger_b')).to.equal(true);
      const names = (await t.host.services.db('schema_migration_checksums').where('name', 'like', 'ledger/%').orderBy('name')).map((r: { name: string }) => r.name);
      expect(names).to.deep.equal(['ledger/001_init', 'ledger/002_more']);
    } finally {
      await t.stop();
    }
  });

  // uaicp's own migrations, without the services its routes need.
  const uaicp = definePlugin({ id: 'uaicp', prefix: '/uaicp-migrations', deps: {}, migrations: uaicpMigrations, routes: () => [] });

  it('accepts the old checksum of a migration rewritten onto the shared helpers, once, and records the new one', async () => {
    const t = await startHost({ db, pgSchema: `t_${crypto.randomBytes(6).toString('hex')}`, plugins: [uaicp] });
    const dir = t.dataDir;
    const schema = (t.host.config.database as { schema?: string }).schema;
    const sums = () => t.host.services.db('schema_migration_checksums').where({ name: 'uaicp/001_uaicp' });
    const current = ((await sums().first()) as { checksum: string }).checksum;
    // A database that ran uaicp's first migration before it used jobColumns.
    await sums().update({ checksum: REWRITTEN_MIGRATIONS['uaicp/001_uaicp'] });
    await t.stop();
    const again = await startHost({ db, dataDir: dir, pgSchema: schema, plugins: [uaicp] });
    try {
      const row = (await again.host.services.db('schema_migration_checksums').where({ name: 'uaicp/001_uaicp' }).first()) as { checksum: string };
      expect(row.checksum).to.equal(current);
    } finally {
      await again.stop();
      if (schema) await dropSchema(schema);
    }
  });
});
