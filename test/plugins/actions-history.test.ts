import { expect } from 'chai';
import actionsHistory from '../../plugins/actions-history';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

eachDatabase('actions history plugin', (db) => {
  let t: TestHost;
  let viewer: string;
  let acmeViewer: string;
  let acmeOp: string;
  let middle: string;
  before(async () => {
    t = await startHost({ db, plugins: [actionsHistory] });
    viewer = (await t.userToken('viewer')).token;
    acmeViewer = (await t.userToken('viewer', 'acme')).token;
    acmeOp = (await t.userToken('operator', 'acme')).token;
    const log = t.host.services.actions;
    await log.record({ source: 'automated', actor: 'breaker', action: 'isolate_kernel', target_type: 'kernel', target_id: 'llm', cause: 'error rate 60%', result: 'succeeded' });
    await log.record({ source: 'manual', actor: 'u-1', action: 'drain_node', target_type: 'node', target_id: 'trading-1', cause: 'incident i-1', result: 'succeeded', tenant_id: 'platform' });
    middle = (await log.record({ source: 'manual', actor: 'u-2', action: 'pause_kernel', target_type: 'kernel', target_id: 'trading', result: 'refused', tenant_id: 'acme' })).created_at;
    await log.record({ source: 'automated', actor: 'incidents', action: 'open_incident', target_type: 'incident', target_id: 'i-2', result: 'succeeded' });
    await log.record({ source: 'manual', actor: 'u-2', action: 'drain_node', target_type: 'node', target_id: 'trading-2', result: 'failed', tenant_id: 'acme' });
  });
  after(() => t.stop());

  const ids = (r: { body: { actions: Array<{ target_id: string }> } }) => r.body.actions.map((a) => a.target_id);

  it('lists every action newest first for an admin (platform ones included), with source, cause, target and result', async () => {
    const r = await t.request('GET', '/ops/actions/history');
    expect(r.status).to.equal(200);
    expect(ids(r)).to.deep.equal(['i-2', 'trading-1', 'llm']);
    expect(r.body.actions[2]).to.include({ source: 'automated', actor: 'breaker', action: 'isolate_kernel', target_type: 'kernel', cause: 'error rate 60%', result: 'succeeded', tenant_id: null });
    expect(r.body.next_cursor).to.equal(null);
  });

  it('scopes by tenant: platform actions need operator', async () => {
    expect(ids(await t.request('GET', '/ops/actions/history', { token: viewer }))).to.deep.equal(['trading-1']);
    expect(ids(await t.request('GET', '/ops/actions/history', { token: acmeViewer }))).to.deep.equal(['trading-2', 'trading']);
    expect(ids(await t.request('GET', '/ops/actions/history', { token: acmeOp }))).to.deep.equal(['trading-2', 'i-2', 'trading', 'llm']);
  });

  it('filters by source, action, target, target type, actor and time, and pages with a cursor', async () => {
    const q = (s: string) => t.request('GET', `/ops/actions/history?${s}`, { token: acmeOp }).then(ids);
    expect(await q('source=automated')).to.deep.equal(['i-2', 'llm']);
    expect(await q('action=drain_node')).to.deep.equal(['trading-2']);
    expect(await q('target=trading')).to.deep.equal(['trading']);
    expect(await q('target_type=kernel')).to.deep.equal(['trading', 'llm']);
    expect(await q('actor=u-2')).to.deep.equal(['trading-2', 'trading']);
    expect(await q(`since=${middle}`)).to.deep.equal(['trading-2', 'i-2', 'trading']);
    expect(await q(`until=${middle}`)).to.deep.equal(['llm']);
    const first = await t.request('GET', '/ops/actions/history?limit=3', { token: acmeOp });
    expect(ids(first)).to.deep.equal(['trading-2', 'i-2', 'trading']);
    const second = await t.request('GET', `/ops/actions/history?limit=3&cursor=${first.body.next_cursor}`, { token: acmeOp });
    expect(ids(second)).to.deep.equal(['llm']);
    expect(second.body.next_cursor).to.equal(null);
  });

  it('401 without a token, 422 for bad filters', async () => {
    expect((await t.request('GET', '/ops/actions/history', { token: null })).status).to.equal(401);
    for (const s of ['source=robot', 'since=yesterday', 'limit=0', 'limit=501', 'cursor=abc', 'action=Drain Node', `since=${middle}&until=${middle}`]) {
      const r = await t.request('GET', `/ops/actions/history?${s}`, { token: viewer });
      expect(r.status, s).to.equal(422);
      expect(r.body.detail[0].loc[0]).to.equal('query');
    }
  });
});
