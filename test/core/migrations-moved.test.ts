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

  it('keep the auth tables of a database that made them in core/003_auth_tokens', async () => {
    const first = await startHost({ db, pgSchema: db === 'postgres' ? `t_moved_auth_${process.pid}_${Date.now()}` : undefined });
    const dataDir = first.dataDir;
    const schema = (first.host.config.database as { schema?: string }).schema;
    const login = await first.request<{ refresh_token: string }>('POST', '/auth/login', { body: first.admin, token: null });
    expect(login.status).to.equal(200);
    // A database from before the move: one core migration made all four tables; core's
    // revocation and outbox migrations had not run.
    const m = first.host.services.db('schema_migrations');
    await m.clone().where({ name: 'auth/003_auth_tokens' }).update({ name: 'core/003_auth_tokens' });
    await m.clone().whereIn('name', ['core/005_revoked_tokens', 'core/005_mail_outbox']).delete();
    await first.host.stop();
    const again = await startHost({ db, dataDir, pgSchema: schema });
    try {
      const names = (await again.host.services.db('schema_migrations').pluck('name')) as string[];
      expect(names.filter((n) => n.endsWith('003_auth_tokens'))).to.deep.equal(['auth/003_auth_tokens']);
      expect(names).to.include.members(['core/005_revoked_tokens', 'core/005_mail_outbox']);
      // The session made before the restart is still there: its refresh token rotates.
      const refreshed = await again.request('POST', '/auth/refresh', { body: { refresh_token: login.body.refresh_token }, token: null });
      expect(refreshed.status).to.equal(200);
    } finally {
      await again.stop();
      if (schema) await dropSchema(schema);
    }
  });
});

const TELEMETRY = ['003_telemetry_events', '004_telemetry_trace_key', '005_telemetry_trace_hot_cold', '006_telemetry_trace_hot_append'];

eachDatabase('telemetry migrations that moved from core to plugin observability', (db) => {
  it('are not run again, and the events stored before the move are still read', async () => {
    const first = await startHost({ db, pgSchema: db === 'postgres' ? `t_moved_tel_${process.pid}_${Date.now()}` : undefined });
    const dataDir = first.dataDir;
    const schema = (first.host.config.database as { schema?: string }).schema;
    const event = { provider: 'openai', request_model: 'gpt-4o', duration_ms: 12 };
    const stored = await first.request('POST', '/observability/v1/ingest/llm-call', { body: event });
    expect(stored.status).to.equal(202);
    // A database from before the move: the telemetry tables recorded as core's migrations.
    for (const name of TELEMETRY) await first.host.services.db('schema_migrations').where({ name: `observability/${name}` }).update({ name: `core/${name}` });
    await first.host.stop();
    const again = await startHost({ db, dataDir, pgSchema: schema });
    try {
      const names = (await again.host.services.db('schema_migrations').pluck('name')) as string[];
      expect(names.filter((n) => TELEMETRY.some((t) => n.endsWith(t))).sort()).to.deep.equal(TELEMETRY.map((t) => `observability/${t}`));
      const events = await again.request('GET', '/observability/v1/query/events');
      expect(events.body.events.map((e: { id: string }) => e.id)).to.deep.equal(stored.body.ids);
    } finally {
      await again.stop();
      if (schema) await dropSchema(schema);
    }
  });
});
