import { expect } from 'chai';
import { dropSchema, eachDatabase, startHost } from '../helpers/host';

eachDatabase('migrations that moved from core to a plugin', (db) => {
  it('are not run again on a database that ran them under core (chaos_001)', async () => {
    const first = await startHost({ db, pgSchema: db === 'postgres' ? `t_moved_${process.pid}_${Date.now()}` : undefined });
    const dataDir = first.dataDir;
    const schema = (first.host.config.database as { schema?: string }).schema;
    // A database from before the move: the chaos tables exist, recorded as core's migration.
    await first.host.services.db('schema_migrations').where({ name: 'chaos/chaos_001' }).update({ name: 'core/chaos_001' });
    await first.host.stop();
    const again = await startHost({ db, dataDir, pgSchema: schema });
    try {
      const names = (await again.host.services.db('schema_migrations').pluck('name')) as string[];
      expect(names.filter((n) => n.endsWith('chaos_001'))).to.deep.equal(['chaos/chaos_001']);
      expect((await again.request('GET', '/ops/resilience/scenarios')).status).to.equal(200);
    } finally {
      await again.stop();
      if (schema) await dropSchema(schema);
    }
  });
});
