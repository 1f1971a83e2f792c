import { expect } from 'chai';
import { definePlugin } from '../../core/plugin';
import { core } from '../../core/services';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

// A handler that inserts a row whose key a concurrent write already took.
const racer = definePlugin({
  id: 'racer',
  prefix: '/racer',
  deps: { db: core.db },
  migrations: [{ name: '001_slots', up: (db) => db.schema.createTable('racer_slots', (t) => t.string('id', 36).primary()) }],
  routes: (route) => [
    route({
      method: 'post',
      path: '/take',
      summary: 'takes slot "one"',
      access: 'member',
      status: 201,
      handler: async ({ services }) => {
        await services.db('racer_slots').insert({ id: 'one' });
        return { taken: 'one' };
      },
    }),
  ],
});

eachDatabase('a unique key taken by a concurrent write', (db) => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ db, plugins: [racer] });
  });
  after(() => t.stop());

  it('answers 409 CONCURRENT_WRITE, not 500, and keeps the first write', async () => {
    expect((await t.request('POST', '/racer/take')).status).to.equal(201);
    const second = await t.request('POST', '/racer/take');
    expect(second.status).to.equal(409);
    expect(second.body.code).to.equal('CONCURRENT_WRITE');
    expect(await t.host.services.db('racer_slots').count({ n: '*' }).first()).to.deep.include({ n: db === 'postgres' ? '1' : 1 });
  });
});
