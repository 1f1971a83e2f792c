// test/plugins/__NAME__.test.ts: the plugin through the real host, over HTTP, on SQLite and
// on PostgreSQL (eachDatabase: keep it for the parts that store things).
import { expect } from 'chai';
import { core } from '../../core/services';
import plugin from '../../plugins/__NAME__';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

eachDatabase('plugin __NAME__', (db) => {
  let t: TestHost;
  let member: string;
  let viewer: string;
  // A clock one second further at every reading (startHost overrides replace any service):
  // entries get distinct times, so their order is known.
  let now = Date.parse('2026-01-01T00:00:00Z');
  const clock = { now: () => new Date((now += 1000)) };
  before(async () => {
    t = await startHost({ db, plugins: [plugin], overrides: [[core.clock, clock]] });
    member = (await t.userToken('member', 'acme')).token;
    viewer = (await t.userToken('viewer', 'acme')).token;
  });
  after(() => t.stop());

  const write = (body: unknown, token: string | null = member) => t.request('POST', '/__NAME__/entries', { body, token });

  it('writes an entry (201), reads it back and lists it; the action is recorded', async () => {
    const made = await write({ title: 'First', body: 'hello' });
    expect(made.status).to.equal(201);
    expect(made.body).to.include({ title: 'First', body: 'hello' });
    const one = await t.request('GET', `/__NAME__/entries/${made.body.id}`, { token: viewer });
    expect(one.body).to.deep.equal(made.body);
    const list = await t.request('GET', '/__NAME__/entries', { token: viewer });
    expect(list.body.entries.map((e: { id: string }) => e.id)).to.include(made.body.id);
    const actions = await t.host.services.db('actions').where({ target_id: made.body.id });
    expect(actions.map((a: { action: string }) => a.action)).to.deep.equal(['create_entry']);
  });

  it('answers 422 for bad input and stores nothing', async () => {
    const before = (await t.request('GET', '/__NAME__/entries', { token: viewer })).body.entries.length;
    const r = await write({ title: '', body: 5 });
    expect(r.status).to.equal(422);
    expect(r.body.detail.map((d: { loc: unknown[]; type: string }) => [d.loc.join('.'), d.type])).to.deep.equal([
      ['body.title', 'string_too_short'],
      ['body.body', 'string_type'],
    ]);
    expect((await t.request('GET', '/__NAME__/entries', { token: viewer })).body.entries.length).to.equal(before);
    expect((await t.request('GET', '/__NAME__/entries/not-a-uuid', { token: viewer })).status).to.equal(422);
  });

  it('401 without a token, 403 for a viewer writing', async () => {
    expect((await write({ title: 'x' }, null)).status).to.equal(401);
    expect((await write({ title: 'x' }, viewer)).status).to.equal(403);
  });

  it("another tenant's entry is 404 and not listed", async () => {
    const other = (await t.userToken('member', 'globex')).token;
    const theirs = (await write({ title: 'Theirs' }, other)).body;
    expect((await t.request('GET', `/__NAME__/entries/${theirs.id}`, { token: viewer })).status).to.equal(404);
    const mine = (await t.request('GET', '/__NAME__/entries', { token: viewer })).body.entries;
    expect(mine.map((e: { id: string }) => e.id)).to.not.include(theirs.id);
  });

  it('pages with limit and cursor, newest first', async () => {
    const tenant = (await t.userToken('member', 'paging')).token;
    for (const title of ['a', 'b', 'c']) await write({ title }, tenant);
    const first = (await t.request('GET', '/__NAME__/entries?limit=2', { token: tenant })).body;
    expect(first.entries.map((e: { title: string }) => e.title)).to.deep.equal(['c', 'b']);
    const rest = (await t.request('GET', `/__NAME__/entries?limit=2&cursor=${first.next_cursor}`, { token: tenant })).body;
    expect(rest).to.deep.equal({ entries: [rest.entries[0]], next_cursor: null });
    expect(rest.entries[0].title).to.equal('a');
  });
});
