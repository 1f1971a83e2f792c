import { expect } from 'chai';
import kernels from '../../../plugins/kernels';
import launch from '../../../plugins/launch-analytics';
import { eachDatabase, startHost, type TestHost } from '../../helpers/host';
import { eventually } from '../../helpers/eventually';

eachDatabase('launch analytics', (db) => {
  let t: TestHost;
  let acme: { token: string; tenantId: string };
  let operator: string;
  before(async () => {
    t = await startHost({ db, plugins: [kernels, launch] });
    acme = await t.userToken('member', 'acme-launch');
    operator = (await t.userToken('operator')).token;
  });
  after(() => t.stop());

  it('counts sign-ups, activations, active tenants, tasks and requests from the records', async () => {
    const before = (await t.request('GET', '/analytics/launch/summary')).body.totals;
    expect(before.signups).to.equal(2); // the platform tenant and acme-launch
    expect(before.activations).to.equal(0);
    expect(before.tasks).to.equal(0);
    const ok = await t.request('POST', '/kernels/analytics/tasks/describe', { token: acme.token, body: { values: [1, 2, 3] } });
    expect(ok.status).to.equal(200);
    const s = await eventually(async () => {
      const r = await t.request('GET', '/analytics/launch/summary');
      return r.body.totals.tasks === 1 ? r : null;
    });
    expect(s.status).to.equal(200);
    expect(s.body.totals).to.include({ signups: 2, activations: 1, active_tenants: 1, tasks: 1, task_errors: 0 });
    expect(s.body.totals.users).to.be.at.least(3);
    expect(s.body.totals.requests).to.be.at.least(3);
    expect(s.body.activation_rate).to.equal(0.5);
    expect(s.body.method).to.be.a('string');
    expect(s.body.inputs).to.be.an('array').with.length.above(0);
  });

  it('gives the same figures by day and by hour, one point a bucket', async () => {
    const until = new Date(Date.now() + 3600_000).toISOString();
    const since = new Date(Date.now() - 2 * 86_400_000).toISOString();
    const days = await t.request('GET', `/analytics/launch/timeseries?bucket=day&since=${since}&until=${until}`);
    expect(days.status).to.equal(200);
    expect(days.body.series.length).to.be.within(3, 4);
    const hours = await t.request('GET', `/analytics/launch/timeseries?bucket=hour&since=${since}&until=${until}`);
    expect(hours.body.series.length).to.be.within(49, 50);
    const sum = (s: Array<Record<string, number>>, k: string) => s.reduce((a, p) => a + p[k]!, 0);
    for (const k of ['signups', 'activations', 'tasks']) expect(sum(hours.body.series, k)).to.equal(sum(days.body.series, k));
    expect(sum(days.body.series, 'tasks')).to.equal(1);
  });

  it('answers an empty window with zeros', async () => {
    const r = await t.request('GET', '/analytics/launch/summary?since=2001-01-01T00:00:00Z&until=2001-02-01T00:00:00Z');
    expect(r.status).to.equal(200);
    expect(r.body.totals).to.deep.equal({ signups: 0, users: 0, activations: 0, active_tenants: 0, requests: 0, request_errors: 0, tasks: 0, task_errors: 0 });
    expect(r.body.activation_rate).to.equal(null);
  });

  it('answers 401, 403 below admin, and 422 for a bad window', async () => {
    for (const p of ['/analytics/launch/summary', '/analytics/launch/timeseries']) {
      expect((await t.request('GET', p, { token: null })).status).to.equal(401);
      expect((await t.request('GET', p, { token: operator })).status).to.equal(403);
      expect((await t.request('GET', `${p}?since=2030-01-01T00:00:00Z&until=2029-01-01T00:00:00Z`)).status).to.equal(422);
    }
    expect((await t.request('GET', '/analytics/launch/timeseries?bucket=week')).status).to.equal(422);
    expect((await t.request('GET', '/analytics/launch/timeseries?bucket=hour&since=2020-01-01T00:00:00Z')).status).to.equal(422);
  });
});
