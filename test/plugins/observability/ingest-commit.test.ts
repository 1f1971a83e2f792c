import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { migrate } from '../../../core/db';
import { EventStore, telemetryMigrations, type EventRow } from '../../../plugins/observability/store';
import { uuidv7 } from '../../../plugins/observability/store/events';
import { startHost, type TestHost } from '../../helpers/host';
import { llm, telemetryPlugins } from '../../helpers/telemetry';

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');
const INGEST = '/observability/v1/ingest/llm-call';

// The SQLite group commit runs as one script (sqlite-writer.ts): these prove that what it
// answers matches what it stored and counted, and that a failing group leaves nothing behind.
describe('ingest group commit', () => {
  describe('through the API', () => {
    let t: TestHost;
    before(async () => {
      t = await startHost({ plugins: telemetryPlugins });
    });
    after(() => t.stop());

    it('answers, stores and counts each id once when concurrent batches repeat ids and stored ones', async () => {
      const tag = hex(4);
      const id = (i: number) => `${tag}-${i}`;
      await t.request('POST', INGEST, { body: { events: [llm({ id: id(0) }), llm({ id: id(1) })] } });
      const before = (await t.request('GET', '/observability/metrics')).body.ingest;
      // Sent together, so that later ones wait for a commit and share the next one.
      const bodies = [
        [id(0), id(2), id(3)],
        [id(2), id(4)],
        [id(3), id(4), id(5), id(1)],
        [id(6)],
        [id(6), id(7), null],
      ].map((ids) => ({ events: ids.map((i) => llm(i === null ? {} : { id: i })) }));
      const answers = await Promise.all(bodies.map((body) => t.request('POST', INGEST, { body })));
      for (const a of answers) expect(a.status).to.equal(202);
      const accepted = answers.reduce((n, a) => n + a.body.accepted, 0);
      const duplicates = answers.reduce((n, a) => n + a.body.duplicates, 0);
      // New: 2..7 and the event without an id; everything else was stored or sent before.
      expect(accepted).to.equal(7);
      expect(duplicates).to.equal(13 - 7);
      const stored = await t.host.services.db('telemetry_events').where('id', 'like', `${tag}-%`).count({ n: '*' }).first();
      expect(Number(stored!.n)).to.equal(8);
      const after = (await t.request('GET', '/observability/metrics')).body.ingest;
      expect(after.accepted - before.accepted).to.equal(7);
      expect(after.duplicates - before.duplicates).to.equal(6);
      expect(after.batches - before.batches).to.equal(5);
    });

    it('stores text with quotes and SQL in it as it was sent', async () => {
      const note = "O'Brien's '); DROP TABLE telemetry_events; -- \u00e9\u{1F600}";
      const r = await t.request('POST', INGEST, { body: { events: [llm({ attributes: { note } }), llm({ request_model: "it's-a-model", response_model: "it's-a-model" })] } });
      expect(r.body.accepted).to.equal(2);
      // Ids the client gave, none stored yet: the batch goes in as the text made when it arrived.
      const given = { id: `${hex(4)}-given`, note: `${note} given` };
      const g = await t.request('POST', INGEST, { body: { events: [llm({ id: given.id, attributes: { note: given.note } }), llm({ id: `${given.id}-2` })] } });
      expect(g.body.accepted).to.equal(2);
      const rows = await t.host.services.db('telemetry_events').whereIn('id', [...r.body.ids, given.id]).orderBy('id');
      const byId = new Map(rows.map((row: { id: string; data: string; model: string }) => [row.id, row]));
      expect(JSON.parse(byId.get(r.body.ids[0])!.data).attributes.note).to.equal(note);
      expect(byId.get(r.body.ids[1])!.model).to.equal("it's-a-model");
      expect(JSON.parse(byId.get(given.id)!.data).attributes.note).to.equal(given.note);
    });
  });

  it('generates ids as RFC 9562 version 7 UUIDs that carry their time and do not repeat', () => {
    const ms = Date.UTC(2026, 10, 23, 12, 0, 0, 123);
    const ids = Array.from({ length: 20_000 }, (_, i) => uuidv7(ms + (i >> 10)));
    for (const id of ids.slice(0, 2000)) expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(ids[0].replace('-', '').slice(0, 12), 16)).to.equal(ms);
    expect(parseInt(ids[19_999].replace('-', '').slice(0, 12), 16)).to.equal(ms + 19);
    expect(new Set(ids).size).to.equal(ids.length);
    // Every variant digit shows up: its two bits are random.
    expect(new Set(ids.map((id) => id[19])).size).to.equal(4);
  });

  describe('in the store', () => {
    let dir: string;
    let db: Knex;
    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-ingest-commit-'));
      db = knexFactory({ client: 'sqlite3', connection: { filename: path.join(dir, 'db.sqlite') }, useNullAsDefault: true, pool: { min: 1, max: 1 } });
      await migrate(db, [{ owner: 'observability', migrations: telemetryMigrations }]);
    });
    after(async () => {
      await db.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    const row = (id: string, extra: Partial<EventRow> = {}): EventRow => ({
      tenant_id: 'acme', id, type: 'llm-call', trace_id: hex(16), span_id: hex(8), parent_span_id: null, ts: new Date().toISOString(), duration_ms: 1,
      status: 'ok', name: 'chat', model: 'm', provider: 'p', kernel: null, result: null, value: null, input_tokens: 1, output_tokens: 1, cost_usd: 0, data: '{}', ...extra,
    });

    it('rolls a failing group back whole, then stores its good batches alone', async () => {
      const store = new EventStore(db, { traceMergeAt: 1000 });
      // The first batch takes the connection; the next two wait and form one group, in which
      // the row without a name fails the NOT NULL constraint half-way through the script.
      const first = store.insert('llm-call', 'acme', [row('a-1')], 0, 0, []);
      const good = store.insert('llm-call', 'acme', [row('g-1'), row('g-2')], 0, 0, []);
      const bad = store.insert('llm-call', 'acme', [row('b-1'), row('b-2', { name: null as unknown as string })], 0, 0, []);
      expect([...(await first)]).to.deep.equal(['a-1']);
      expect([...(await good)].sort()).to.deep.equal(['g-1', 'g-2']);
      let failure: Error | null = null;
      await bad.catch((err: Error) => (failure = err));
      expect(String(failure)).to.match(/NOT NULL/);
      const ids = (await db('telemetry_events').select('id').orderBy('id')).map((r: { id: string }) => r.id);
      expect(ids).to.deep.equal(['a-1', 'g-1', 'g-2']);
      const [stats] = await store.stats('acme');
      expect(stats).to.include({ accepted: 3, duplicates: 0, batches: 2 });
      // The connection is usable afterwards: no transaction was left open.
      expect([...(await store.insert('llm-call', 'acme', [row('a-1'), row('c-1')], 0, 0, ['a-1']))]).to.deep.equal(['c-1']);
      expect((await store.stats('acme'))[0]).to.include({ accepted: 4, duplicates: 1, batches: 3 });
    });

    it('finds stored ids per tenant: the same id is new for another tenant in the same group', async () => {
      const store = new EventStore(db, { traceMergeAt: 1000 });
      const of = (tenant: string, id: string) => ({ ...row(id), tenant_id: tenant });
      expect([...(await store.insert('llm-call', 'acme', [of('acme', 'm-1')], 0, 0, ['m-1']))]).to.deep.equal(['m-1']);
      // The first batch takes the connection; the next two wait and form one group.
      const first = store.insert('llm-call', 'acme', [of('acme', 'm-0')], 0, 0, []);
      const beta = store.insert('llm-call', 'beta', [of('beta', 'm-1')], 0, 0, ['m-1']);
      const acme = store.insert('llm-call', 'acme', [of('acme', 'm-1'), of('acme', 'm-2')], 0, 0, ['m-1', 'm-2']);
      await first;
      expect([...(await beta)]).to.deep.equal(['m-1']);
      expect([...(await acme)]).to.deep.equal(['m-2']);
      const stored = await db('telemetry_events').where('id', 'like', 'm-%').select('tenant_id', 'id').orderBy(['tenant_id', 'id']);
      expect(stored).to.deep.equal([
        { tenant_id: 'acme', id: 'm-0' }, { tenant_id: 'acme', id: 'm-1' }, { tenant_id: 'acme', id: 'm-2' }, { tenant_id: 'beta', id: 'm-1' },
      ]);
    });
  });
});
