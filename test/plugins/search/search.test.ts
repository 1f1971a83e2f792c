import { expect } from 'chai';
import incidents from '../../../plugins/incidents';
import search from '../../../plugins/search';
import { eachDatabase, startHost, type TestHost } from '../../helpers/host';
import { eventually } from '../../helpers/eventually';

eachDatabase('GET /search/', (db) => {
  let t: TestHost;
  let op: string;
  let viewer: string;
  let otherViewer: string;
  before(async () => {
    t = await startHost({ db, plugins: [incidents, search] });
    op = (await t.userToken('operator')).token;
    viewer = (await t.userToken('viewer')).token;
    otherViewer = (await t.userToken('viewer', 'acme')).token;
  });
  after(() => t.stop());

  it('finds a just-created incident by a word of its title, with a highlight', async () => {
    const made = await t.request('POST', '/incidents/detect', { token: op, body: { title: 'Quokka latency on trading', severity: 'low', description: 'seen by the pricing desk' } });
    expect(made.status).to.equal(201);
    const r = await eventually(async () => {
      const s = await t.request('GET', '/search/?q=quokka', { token: viewer });
      return s.body.total === 1 && s.body.results.length === 1 ? s : null;
    }, 15_000);
    expect(r.status).to.equal(200);
    expect(r.body.engine).to.equal(db === 'sqlite' ? 'sqlite-fts5' : 'postgresql-tsvector');
    expect(r.body.results[0]).to.include({ type: 'incident', id: made.body.id, url: `/ops/incidents/${made.body.id}` });
    expect(r.body.results[0].highlights.title).to.contain('<mark>Quokka</mark>');
    // a later change (a mitigation note, a state) is re-indexed, not duplicated
    const closed = await t.request('POST', `/ops/incidents/${made.body.id}/resolve`, { token: op, body: {} });
    expect(closed.status).to.equal(200);
    const again = await eventually(async () => {
      const s = await t.request('GET', '/search/?q=quokka%20resolved', { token: viewer });
      return s.body.total === 1 && s.body.results.length === 1 ? s : null;
    }, 15_000);
    expect(again.body.results[0].id).to.equal(made.body.id);
  });

  it('matches a prefix of the last word, filters by type and pages', async () => {
    for (const w of ['Wombat one', 'Wombat two', 'Wombat three']) {
      expect((await t.request('POST', '/incidents/detect', { token: op, body: { title: w, severity: 'low' } })).status).to.equal(201);
    }
    const first = await eventually(async () => {
      const s = await t.request('GET', '/search/?q=womb&limit=2&types=incident', { token: viewer });
      return s.body.total === 3 ? s : null;
    }, 15_000);
    expect(first.body.results).to.have.length(2);
    expect(first.body.next_cursor).to.equal('2');
    const second = await t.request('GET', `/search/?q=womb&limit=2&types=incident&cursor=${first.body.next_cursor}`, { token: viewer });
    expect(second.body.results).to.have.length(1);
    expect(second.body.next_cursor).to.equal(null);
    const ids = [...first.body.results, ...second.body.results].map((h: { id: string }) => h.id);
    expect(new Set(ids).size).to.equal(3);
    const none = await t.request('GET', '/search/?q=wombat&types=workflow', { token: viewer });
    expect(none.body).to.include({ total: 0 });
  });

  it('finds the platform kernels for every tenant', async () => {
    const r = await eventually(async () => {
      const s = await t.request('GET', '/search/?q=trading&types=kernel', { token: otherViewer });
      return s.body.total >= 1 ? s : null;
    }, 15_000);
    expect(r.body.results[0]).to.include({ type: 'kernel', id: 'trading', tenant_id: null });
  });

  it("does not show another tenant's objects", async () => {
    const r = await t.request('GET', '/search/?q=quokka', { token: otherViewer });
    expect(r.status).to.equal(200);
    expect(r.body).to.deep.include({ total: 0, results: [] });
  });

  it('treats query syntax as plain words', async () => {
    const r = await t.request('GET', `/search/?q=${encodeURIComponent('"quokka" * ^(')}`, { token: viewer });
    expect(r.status).to.equal(200);
    expect(r.body.total).to.equal(1);
  });

  it('answers 401 without a token and 422 for bad input', async () => {
    expect((await t.request('GET', '/search/?q=x', { token: null })).status).to.equal(401);
    expect((await t.request('GET', '/search/', { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', '/search/?q=x&limit=1000', { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', '/search/?q=x&types=Bad-Type', { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', '/search/?q=x&cursor=abc', { token: viewer })).status).to.equal(422);
  });
});
