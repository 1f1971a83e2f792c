import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { migrate } from '../../../core/db';
import { EventStore, telemetryMigrations } from '../../../plugins/observability/store';
import { startHost, type TestHost } from '../../helpers/host';
import { llm, telemetryPlugins } from '../../helpers/telemetry';

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');
const count = async (db: Knex, table: string) => Number((await db(table).count({ n: '*' }).first())!.n);

describe('SQLite trace index (hot and cold tables)', () => {
  describe('through the API, with merges every few rows', () => {
    let t: TestHost;
    before(async () => {
      t = await startHost({ plugins: telemetryPlugins, config: { telemetry: { traceMergeAt: 5 } } });
    });
    after(() => t.stop());

    it('finds every span of a trace whether its entries are hot or merged into the cold table', async () => {
      const traceId = hex(16);
      const root = hex(8);
      // Three spans now; eight unrelated events push the hot table past 5 and merge it.
      const first = await t.request('POST', '/observability/v1/ingest/llm-call', {
        body: { events: [llm({ trace_id: traceId, span_id: root }), llm({ trace_id: traceId, span_id: hex(8), parent_span_id: root }), llm({ trace_id: traceId, span_id: hex(8), parent_span_id: root })] },
      });
      expect(first.status).to.equal(202);
      const db = t.host.services.db;
      expect(await count(db, 'telemetry_trace_hot')).to.equal(3);
      await t.request('POST', '/observability/v1/ingest/llm-call', { body: { events: Array.from({ length: 8 }, () => llm()) } });
      expect(await count(db, 'telemetry_trace_hot')).to.equal(0);
      expect(await count(db, 'telemetry_trace_cold')).to.equal(11);
      // One more span of the same trace, which stays hot.
      await t.request('POST', '/observability/v1/ingest/llm-call', { body: llm({ trace_id: traceId, span_id: hex(8), parent_span_id: root }) });
      expect(await count(db, 'telemetry_trace_hot')).to.equal(1);

      const tree = await t.request('GET', `/observability/v1/query/traces/${traceId}`);
      expect(tree.status).to.equal(200);
      expect(tree.body.span_count).to.equal(4);
      expect(tree.body.spans[0].children).to.have.length(3);
      const listed = await t.request('GET', `/observability/v1/query/events?trace_id=${traceId}`);
      expect(listed.body.events).to.have.length(4);
    });

    it('drops the entries of deleted rows', async () => {
      const db = t.host.services.db;
      const traceId = hex(16);
      await t.request('POST', '/observability/v1/ingest/llm-call', { body: { events: [llm({ trace_id: traceId }), llm({ trace_id: traceId })] } });
      const before = (await count(db, 'telemetry_trace_hot')) + (await count(db, 'telemetry_trace_cold'));
      await db('telemetry_events').where({ trace_id: traceId }).delete();
      const after = (await count(db, 'telemetry_trace_hot')) + (await count(db, 'telemetry_trace_cold'));
      expect(before - after).to.equal(2);
      const tree = await t.request('GET', `/observability/v1/query/traces/${traceId}`);
      expect(tree.status).to.equal(404);
    });
  });

  it('migration 005 keeps the stored rows, their dedupe key, and indexes them in the cold table', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-trace-idx-'));
    const db = knexFactory({ client: 'sqlite3', connection: { filename: path.join(dir, 'db.sqlite') }, useNullAsDefault: true });
    try {
      const upTo004 = telemetryMigrations.filter((m) => m.name < '005');
      await migrate(db, [{ owner: 'observability', migrations: upTo004 }]);
      const traceId = hex(16);
      const rows = Array.from({ length: 3 }, (_, i) => ({
        tenant_id: 'acme', id: `old-${i}`, type: 'llm-call', trace_id: traceId, span_id: hex(8), ts: new Date(Date.now() - i).toISOString(), status: 'ok', name: 'chat', data: '{}',
      }));
      await db('telemetry_events').insert(rows);
      await migrate(db, [{ owner: 'observability', migrations: telemetryMigrations }]);

      expect(await count(db, 'telemetry_trace_cold')).to.equal(3);
      expect(await count(db, 'telemetry_trace_hot')).to.equal(0);
      const store = new EventStore(db, { traceMergeAt: 1000 });
      const found = await store.trace('acme', traceId, 10);
      expect(found.map((r: { id: string }) => r.id).sort()).to.deep.equal(['old-0', 'old-1', 'old-2']);
      expect(await store.trace('other-tenant', traceId, 10)).to.have.length(0);
      // The (tenant_id, id) key still refuses a second row, and a new row gets its hot entry.
      await db.raw("INSERT INTO telemetry_events (tenant_id, id, type, trace_id, span_id, ts, status, name, data) VALUES ('acme', 'old-0', 'llm-call', ?, ?, '2026-01-01T00:00:00.000Z', 'ok', 'chat', '{}') ON CONFLICT (tenant_id, id) DO NOTHING", [traceId, hex(8)]);
      expect(await count(db, 'telemetry_events')).to.equal(3);
      await db.raw("INSERT INTO telemetry_events (tenant_id, id, type, trace_id, span_id, ts, status, name, data) VALUES ('acme', 'new-0', 'llm-call', ?, ?, '2026-01-01T00:00:00.000Z', 'ok', 'chat', '{}')", [traceId, hex(8)]);
      expect(await count(db, 'telemetry_trace_hot')).to.equal(1);
      expect(await store.trace('acme', traceId, 10)).to.have.length(4);
    } finally {
      await db.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('migration 006 keeps the hot entries, now in insertion order, and the triggers work on them', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-trace-idx-'));
    const db = knexFactory({ client: 'sqlite3', connection: { filename: path.join(dir, 'db.sqlite') }, useNullAsDefault: true });
    try {
      await migrate(db, [{ owner: 'observability', migrations: telemetryMigrations.filter((m) => m.name < '006') }]);
      const traceId = hex(16);
      const insert = (id: string) =>
        db.raw("INSERT INTO telemetry_events (tenant_id, id, type, trace_id, span_id, ts, status, name, data) VALUES ('acme', ?, 'llm-call', ?, ?, '2026-01-01T00:00:00.000Z', 'ok', 'chat', '{}')", [id, traceId, hex(8)]);
      for (const id of ['h-0', 'h-1', 'h-2']) await insert(id);
      expect(await count(db, 'telemetry_trace_hot')).to.equal(3);
      await migrate(db, [{ owner: 'observability', migrations: telemetryMigrations }]);
      const hot = await db('telemetry_trace_hot').select('seq', 'trace_key');
      expect(hot.map((r: { trace_key: string }) => r.trace_key)).to.deep.equal(Array(3).fill(traceId.slice(-8)));
      await insert('h-3');
      const store = new EventStore(db, { traceMergeAt: 1000 });
      expect(await store.trace('acme', traceId, 10)).to.have.length(4);
      await db('telemetry_events').where({ id: 'h-1' }).delete();
      expect(await count(db, 'telemetry_trace_hot')).to.equal(3);
      expect((await store.trace('acme', traceId, 10)).map((r: { id: string }) => r.id).sort()).to.deep.equal(['h-0', 'h-2', 'h-3']);
    } finally {
      await db.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
