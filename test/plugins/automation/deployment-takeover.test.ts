import { expect } from 'chai';
import { automationRef } from '../../../plugins/automation/context';
import { eventually } from '../../helpers/eventually';
import { startHost, type TestHost } from '../../helpers/host';

// A deployment holds a lease while it runs; one left in flight by a process that died (its
// lease run out, or never taken) is settled as failed by the next sweep of any host.
describe('automation: deployments left in flight by a process that died', function () {
  this.timeout(60_000);
  let h: TestHost;
  let operator: string;

  before(async () => {
    h = await startHost({ config: { mesh: { only: ['analytics'] }, automation: { deployments: { gateProbes: 1, gateTimeoutMs: 5000, leaseMs: 1000 } } } });
    operator = (await h.userToken('operator')).token;
  });
  after(() => h?.stop());

  const draft = async () => (await h.request('POST', '/automation/deployments', { body: { kernel_id: 'analytics', nodes: 1 }, token: operator })).body.id as string;
  const db = () => h.host.services.db;
  const engine = () => h.host.service(automationRef).deployments;

  it('takes a lease to run (409 while another process holds it) and gives it up when done', async () => {
    const id = await draft();
    await h.request('POST', `/automation/deployments/${id}/validate`, { token: operator });
    const future = new Date(Date.now() + 600_000).toISOString();
    await db()('leases').insert({ name: `automation.deployment:${id}`, owner: 'other-host:1:aaaa', lease_until: future, updated_at: future });
    const refused = await h.request('POST', `/automation/deployments/${id}/execute`, { token: operator });
    expect(refused.status).to.equal(409);
    expect(refused.body.detail).to.equal('Another host is running this deployment');
    expect((await h.request('GET', `/automation/deployments/${id}`, { token: operator })).body.state).to.equal('validated');
    await db()('leases').where({ name: `automation.deployment:${id}` }).delete();
    const x = await h.request('POST', `/automation/deployments/${id}/execute`, { token: operator });
    expect(x.status).to.equal(202);
    const done = await eventually(async () => {
      const r = await h.request('GET', `/automation/deployments/${id}`, { token: operator });
      return ['succeeded', 'failed', 'rolled_back'].includes(r.body.state) ? r.body : null;
    });
    expect(done.state).to.equal('succeeded');
    expect(await eventually(async () => ((await h.host.services.leases.holder(`automation.deployment:${id}`)) === null ? true : null))).to.equal(true);
  });

  it('settles a running deployment whose lease ran out as failed, once, and keeps one whose lease is live', async () => {
    const dead = await draft();
    const alive = await draft();
    const past = new Date(Date.now() - 60_000).toISOString();
    const future = new Date(Date.now() + 600_000).toISOString();
    await db()('automation_deployments').whereIn('id', [dead, alive]).update({ state: 'running' });
    await db()('leases').insert([
      { name: `automation.deployment:${dead}`, owner: 'killed-host:123:abcd', lease_until: past, updated_at: past },
      { name: `automation.deployment:${alive}`, owner: 'other-host:456:ef01', lease_until: future, updated_at: past },
    ]);
    // The periodic sweep (every half lease) finds it by itself.
    const failed = await eventually(async () => {
      const r = await h.request('GET', `/automation/deployments/${dead}`, { token: operator });
      return r.body.state === 'failed' ? r.body : null;
    });
    expect(failed.reason).to.match(/^the process running this deployment stopped while it was running \(its lease ran out\)/);
    expect(failed.allowed_actions).to.deep.equal(['rollback']);
    const alsoAlive = await h.request('GET', `/automation/deployments/${alive}`, { token: operator });
    expect(alsoAlive.body.state).to.equal('running');
    // Settled once: a second sweep finds nothing more, and one action records it.
    expect(await engine().sweep()).to.deep.equal([]);
    // The periodic sweep records its action just after the state change.
    const acts = await eventually(async () => {
      const rows = await db()('actions').where({ action: 'deployment_abandoned', target_id: dead });
      return rows.length ? rows : null;
    });
    expect(acts).to.have.length(1);
    expect(await h.host.services.leases.holder(`automation.deployment:${dead}`)).to.equal(null);
    await db()('leases').where({ name: `automation.deployment:${alive}` }).delete();
  });
});
