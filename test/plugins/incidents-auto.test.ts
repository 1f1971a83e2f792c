import { expect } from 'chai';
import actionsHistory from '../../plugins/actions-history';
import incidents from '../../plugins/incidents';
import { eventually } from '../helpers/eventually';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

eachDatabase('incidents opened by mesh events', (db) => {
  let t: TestHost;
  let op: string;
  before(async () => {
    t = await startHost({ db, plugins: [incidents, actionsHistory] });
    op = (await t.userToken('operator')).token;
  });
  after(() => t.stop());

  const publish = (type: string, data: Record<string, unknown>) => t.host.services.events.publish(type, data);
  const byCause = (cause: string) => t.host.services.db('incidents').where({ cause }).orderBy('created_at');
  const kinds = async (id: string) => (await t.request('GET', `/ops/incidents/${id}`, { token: op })).body.timeline.map((e: { kind: string }) => e.kind);

  it('opens one platform incident per unhealthy node while it is active, notes recurrence and recovery', async () => {
    const unhealthy = { kernel_id: 'trading', node_id: 'trading-1', domain: 'trading', health: 'unhealthy', previous: 'degraded', reason: 'error rate 40%' };
    publish('health_update', unhealthy);
    const row = await eventually(async () => (await byCause('health:node:trading-1'))[0]);
    expect(row).to.include({ tenant_id: null, source: 'automated', severity: 'medium', state: 'open', kernel_id: 'trading', node_id: 'trading-1', domain: 'trading' });
    expect(row.title).to.equal('Node trading-1 unhealthy: error rate 40%');
    publish('health_update', { ...unhealthy, previous: 'healthy', health: 'unhealthy' });
    publish('health_update', { ...unhealthy, previous: 'unhealthy', health: 'healthy', reason: 'recovered' });
    await eventually(async () => (await kinds(row.id)).length === 3);
    expect(await kinds(row.id)).to.deep.equal(['opened', 'recurred', 'cause_cleared']);
    expect(await byCause('health:node:trading-1')).to.have.length(1);

    const h = await t.request('GET', `/ops/actions/history?source=automated&action=open_incident&target=${row.id}`, { token: op });
    expect(h.body.actions).to.have.length(1);
    expect(h.body.actions[0]).to.include({ actor: 'incidents', result: 'succeeded', cause: 'health_update: error rate 40%', tenant_id: null });

    // Once resolved, the same cause opens a new incident.
    expect((await t.request('POST', `/ops/incidents/${row.id}/resolve`, { token: op })).status).to.equal(200);
    publish('health_update', unhealthy);
    await eventually(async () => (await byCause('health:node:trading-1')).length === 2);
  });

  it('opens a critical incident when a breaker opens, one per kernel, and only for real events', async () => {
    publish('breaker_state', { kernel_id: 'llm', state: 'open', isolated: false });
    publish('breaker_state', { kernel_id: 'llm', state: 'open', isolated: false });
    publish('breaker_state', { kernel_id: 'llm', state: 'half_open', isolated: false });
    publish('breaker_state', { state: 'open' }); // malformed: ignored
    publish('health_update', { kernel_id: 'llm', node_id: null, domain: 'llm', health: 'degraded', previous: 'healthy', reason: 'slow' }); // not unhealthy
    publish('health_update', { kernel_id: 'analytics', node_id: null, domain: 'analytics', health: 'unhealthy', previous: 'degraded', reason: 'all nodes failing' });
    const kernel = await eventually(async () => (await byCause('health:kernel:analytics'))[0]);
    expect(kernel).to.include({ severity: 'high', title: 'Kernel analytics unhealthy: all nodes failing' });
    const rows = await byCause('breaker:llm');
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ severity: 'critical', domain: 'llm', tenant_id: null });
    expect(await kinds(rows[0].id)).to.deep.equal(['opened', 'recurred']);
    expect(await t.host.services.db('incidents').where({ domain: 'llm' }).whereNot({ cause: 'breaker:llm' })).to.have.length(0);
  });

  it('shows platform incidents to operators but not to viewers', async () => {
    const v = (await t.userToken('viewer')).token;
    const asViewer = await t.request('GET', '/ops/incidents/active', { token: v });
    expect(asViewer.body.incidents).to.have.length(0);
    const asOp = await t.request('GET', '/ops/incidents/active', { token: op });
    expect(asOp.body.incidents.length).to.be.at.least(3);
    expect(asOp.body.incidents.every((i: { tenant_id: string | null }) => i.tenant_id === null)).to.equal(true);
  });
});
