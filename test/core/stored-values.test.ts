import { expect } from 'chai';
import path from 'node:path';
import { z } from 'zod';
import { discoverPlugins } from '../../core/loader';
import { definePlugin } from '../../core/plugin';
import { core } from '../../core/services';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

// Values one store keeps and the other refuses: PostgreSQL holds no U+0000 in text or jsonb,
// and no integer past its column's type. Before these checks both reached the database
// after validation and answered 500 on PostgreSQL only.
const keeper = definePlugin({
  id: 'keeper',
  prefix: '/keeper',
  deps: { db: core.db },
  migrations: [{ name: '001_rows', up: (db) => db.schema.createTable('keeper_rows', (t) => { t.increments('id'); t.integer('n'); t.text('s'); }) }],
  routes: (route) => [
    route({
      method: 'post',
      path: '/rows/{tag}',
      summary: 'stores a row (its integer deliberately unbounded by the schema)',
      access: 'member',
      params: z.object({ tag: z.string() }),
      query: z.object({ q: z.string().optional() }),
      body: z.object({ n: z.number().int(), s: z.string(), extra: z.record(z.string(), z.unknown()).optional() }),
      status: 201,
      handler: async ({ body, services }) => {
        await services.db('keeper_rows').insert({ n: body.n, s: body.s });
        return { stored: true };
      },
    }),
  ],
});

eachDatabase('values a store cannot keep', (db) => {
  let t: TestHost;
  const rows = async () => Number((await t.host.services.db('keeper_rows').count({ n: '*' }).first())!.n);
  before(async () => {
    t = await startHost({ db, plugins: [...discoverPlugins(path.resolve(__dirname, '..', '..', 'plugins')), keeper] });
  });
  after(() => t.stop());

  it('refuses U+0000 in the body, a body key, the query and the path with 422 naming the field, and stores nothing', async () => {
    const cases: Array<[string, unknown, Array<string | number>]> = [
      ['/keeper/rows/a', { n: 1, s: 'a\u0000b' }, ['body', 's']],
      ['/keeper/rows/a', { n: 1, s: 'ok', extra: { list: ['fine', 'x\u0000'] } }, ['body', 'extra', 'list', 1]],
      ['/keeper/rows/a', { n: 1, s: 'ok', extra: { 'k\u0000': 1 } }, ['body', 'extra', 'k\u0000']],
      ['/keeper/rows/a?q=x%00y', { n: 1, s: 'ok' }, ['query', 'q']],
      ['/keeper/rows/a%00b', { n: 1, s: 'ok' }, ['path', 'tag']],
    ];
    for (const [path, body, loc] of cases) {
      const res = await t.request('POST', path, { body });
      expect(res.status, path).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_ERROR');
      expect(res.body.detail).to.deep.equal([{ loc, msg: loc[loc.length - 1] === 'k\u0000' ? 'a key must not contain the NUL character (U+0000)' : 'must not contain the NUL character (U+0000)', type: 'value_error.nul' }]);
    }
    expect(await rows()).to.equal(0);
    // The escaped text of a backslash followed by u0000 is not a NUL: it is kept.
    expect((await t.request('POST', '/keeper/rows/a', { raw: JSON.stringify({ n: 1, s: '\\u0000' }) })).status).to.equal(201);
    expect(await rows()).to.equal(1);
  });

  it(db === 'postgres' ? 'answers 422 VALUE_NOT_STORABLE for an integer past the column, without the SQL, and stores nothing' : 'stores an integer past 32 bits, as SQLite keeps it', async () => {
    const before = await rows();
    const res = await t.request('POST', '/keeper/rows/a', { body: { n: 2 ** 40, s: 'big' } });
    if (db === 'postgres') {
      expect(res.status).to.equal(422);
      expect(res.body.code).to.equal('VALUE_NOT_STORABLE');
      expect(res.body.detail).to.deep.equal([{ loc: ['body'], msg: 'cannot be stored: value "1099511627776" is out of range for type integer', type: 'value_error.not_storable' }]);
      expect(await rows()).to.equal(before);
    } else {
      expect(res.status).to.equal(201);
      expect(await rows()).to.equal(before + 1);
    }
  });

  it('refuses a NUL in a real route before it writes (an incident title)', async () => {
    const res = await t.request('POST', '/incidents/detect', { body: { title: 'disk\u0000full', severity: 'high' } });
    expect(res.status).to.equal(422);
    expect(res.body.detail[0].loc).to.deep.equal(['body', 'title']);
    const titles = (await t.request('GET', '/ops/incidents/active')).body.incidents.map((i: { title: string }) => i.title);
    expect(titles.filter((x: string) => x.startsWith('disk'))).to.deep.equal([]);
    const search = await t.request('GET', '/ops/actions/history?actor=x%00');
    expect(search.status).to.equal(422);
    expect(search.body.detail[0].loc).to.deep.equal(['query', 'actor']);
  });

  it('bounds a policy-set version to what the column holds', async () => {
    const res = await t.request('POST', '/secsuite/netsec/policies/apply', { body: { rollback_to: Number.MAX_SAFE_INTEGER } });
    expect(res.status).to.equal(422);
    expect(res.body.detail[0].loc).to.deep.equal(['body', 'rollback_to']);
  });
});
