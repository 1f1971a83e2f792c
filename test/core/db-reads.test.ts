import { expect } from 'chai';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

// Plain reads go to read-only connections on SQLite (core/db.ts): a write acknowledged
// before a read starts must be seen by it, whichever connection serves the read.
eachDatabase('database reads', (db) => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ db });
  });
  after(async () => t.stop());

  it('a read after an acknowledged write sees it, every time, also with reads in flight', async () => {
    const knex = t.host.services.db;
    const base = await knex('users').first();
    for (let i = 0; i < 40; i++) {
      const name = `reader-check-${i}`;
      // Reads in flight on the other connections while the write commits.
      const busy = Array.from({ length: 4 }, () => knex('users').where({ id: base.id }).first());
      await knex('users').where({ id: base.id }).update({ name });
      const [row] = await Promise.all([knex('users').where({ id: base.id }).first(), ...busy]);
      expect(row.name).to.equal(name);
    }
  });

  it('queries inside a transaction see its own writes; reads outside see them after the commit', async () => {
    const knex = t.host.services.db;
    const base = await knex('users').first();
    await knex.transaction(async (trx) => {
      await trx('users').where({ id: base.id }).update({ name: 'in-transaction' });
      expect((await trx('users').where({ id: base.id }).first()).name).to.equal('in-transaction');
      // Same pluck through the transaction: runs on its connection too.
      expect(await trx('users').where({ id: base.id }).pluck('name')).to.deep.equal(['in-transaction']);
    });
    expect((await knex('users').where({ id: base.id }).first()).name).to.equal('in-transaction');
  });

  it('a read outside an open transaction does not wait for it, and sees the state before it', async () => {
    const knex = t.host.services.db;
    const base = await knex('users').first();
    await knex('users').where({ id: base.id }).update({ name: 'before' });
    await knex.transaction(async (trx) => {
      await trx('users').where({ id: base.id }).update({ name: 'uncommitted' });
      // On SQLite the writer's one connection is held here: this read is served by a reader.
      expect((await knex('users').where({ id: base.id }).first()).name).to.equal('before');
    });
    expect((await knex('users').where({ id: base.id }).first()).name).to.equal('uncommitted');
  });

  it('a failed select answers its error and the next one runs', async () => {
    const knex = t.host.services.db;
    let failed: unknown = null;
    await knex('no_such_table').select('*').catch((err: unknown) => (failed = err));
    expect(String(failed)).to.match(/no_such_table/);
    expect((await knex('users').count({ n: '*' }).first())!.n).to.not.equal(undefined);
  });

  it('over HTTP: an incident opened is in the active list read right after', async () => {
    for (let i = 0; i < 15; i++) {
      const made = await t.request('POST', '/incidents/detect', { token: t.adminToken, body: { title: `ryw ${i}`, severity: 'low', domain: 'trading' } });
      expect(made.status).to.equal(201);
      const list = await t.request('GET', '/ops/incidents/active?limit=100', { token: t.adminToken });
      expect(list.status).to.equal(200);
      expect(list.body.incidents.map((x: { id: string }) => x.id)).to.include(made.body.id);
    }
  });
});

describe('database reads [postgres]: named statements', () => {
  let t: TestHost;
  before(async () => {
    // One connection, so that the session asked about its statements is the one that ran them.
    t = await startHost({ db: 'postgres', config: { database: { poolSize: 1 } } });
  });
  after(async () => t.stop());

  it('runs a select as a named statement, prepared once on the connection, and names at most 200 texts', async () => {
    const knex = t.host.services.db;
    const prepared = async () => (await knex.raw("select name, statement from pg_prepared_statements where name like 'pc_read_%'")).rows as Array<{ name: string; statement: string }>;
    const mine = async () => (await prepared()).filter((r) => r.statement.includes('named_probe'));
    expect(await mine()).to.deep.equal([]);
    // The host's own jobs may prepare texts of their own meanwhile: only this text is counted.
    for (let i = 0; i < 3; i++) await knex('users').where({ email: 'named-statement@example.com' }).first('id as named_probe');
    expect(await mine()).to.have.length(1);
    // Past 200 texts, selects run unnamed: the connection holds no more.
    for (let i = 0; i < 220; i++) await knex('users').where({ email: `n-${i}@example.com` }).select(knex.raw(`${i} as n`));
    expect((await prepared()).length).to.equal(200);
    expect((await knex('users').where({ email: 'n-219@example.com' }).select(knex.raw('219 as n')))).to.deep.equal([]);
  });
});
