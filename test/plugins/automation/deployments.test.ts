import crypto from 'node:crypto';
import { expect } from 'chai';
import type { BusEvent } from '../../../core/events';
import { eventually } from '../../helpers/eventually';
import { startHost, type TestHost } from '../../helpers/host';
import { settleDeployment } from './helpers';

describe('automation: deployments on the mesh', function () {
  this.timeout(60_000);
  let h: TestHost;
  let viewer: string;
  let operator: string;
  let other: string;

  before(async () => {
    h = await startHost({ config: { mesh: { only: ['analytics'] }, automation: { deployments: { gateProbes: 3, gateTimeoutMs: 5000 } } } });
    viewer = (await h.userToken('viewer')).token;
    operator = (await h.userToken('operator')).token;
    other = (await h.userToken('operator', 'other-tenant')).token;
  });
  after(() => h?.stop());

  const nodes = () => h.host.services.mesh.kernel('analytics').nodes.filter((n) => n.state !== 'drained');
  const settle = (id: string, states: string[]) => settleDeployment(h, viewer, id, states);

  it('creates, validates and rolls out node by node behind the health gate', async () => {
    expect((await h.request('POST', '/automation/deployments', { body: { kernel_id: 'analytics', nodes: 2 }, token: viewer })).status).to.equal(403);
    expect((await h.request('POST', '/automation/deployments', { body: { kernel_id: 'analytics' }, token: null })).status).to.equal(401);
    expect((await h.request('POST', '/automation/deployments', { body: { kernel_id: 'nope' }, token: operator })).status).to.equal(422);
    expect((await h.request('POST', '/automation/deployments', { body: { kernel_id: 'analytics', nodes: -1 }, token: operator })).status).to.equal(422);
    const c = await h.request('POST', '/automation/deployments', { body: { kernel_id: 'analytics', nodes: 2, threads_per_node: 2 }, token: operator });
    expect(c.status).to.equal(201);
    expect(c.body.state).to.equal('draft');
    expect(c.body.allowed_actions).to.deep.equal(['validate']);
    const id = c.body.id;
    // Execute before validation: the state forbids it.
    const early = await h.request('POST', `/automation/deployments/${id}/execute`, { token: operator });
    expect(early.status).to.equal(409);
    expect(early.text).to.contain('INVALID_STATE');
    const v = await h.request('POST', `/automation/deployments/${id}/validate`, { token: operator });
    expect(v.status).to.equal(200);
    expect(v.body.state, JSON.stringify(v.body.validation)).to.equal('validated');
    expect(v.body.validation.checks.map((x: { name: string }) => x.name)).to.include.members(['worker_answers', 'thread_capacity']);
    const x = await h.request('POST', `/automation/deployments/${id}/execute`, { token: operator });
    expect(x.status).to.equal(202);
    expect(x.body.state).to.equal('queued');
    const done = await settle(id, ['succeeded', 'failed', 'rolled_back']);
    expect(done.state, done.reason).to.equal('succeeded');
    expect(nodes().map((n) => n.threads)).to.deep.equal([2, 2]);
    // Surge first: the new node passed its gate before the old one was drained.
    expect(done.steps.map((s: { action: string }) => s.action)).to.deep.equal(['add_node', 'add_node', 'remove_node']);
    expect(done.steps.every((s: { gate: { ok: boolean } }) => s.gate.ok)).to.equal(true);
    expect(done.before).to.have.length(1);
    expect((await h.request('POST', `/automation/deployments/${id}/execute`, { token: operator })).status).to.equal(409);

    // Manual rollback to the shape before.
    const rb = await h.request('POST', `/automation/deployments/${id}/rollback`, { token: operator });
    expect(rb.status).to.equal(202);
    const back = await settle(id, ['rolled_back', 'failed']);
    expect(back.state, back.reason).to.equal('rolled_back');
    expect(nodes().map((n) => n.threads)).to.deep.equal([1]);
    expect((await h.request('POST', `/automation/deployments/${id}/rollback`, { token: operator })).status).to.equal(409);
  });

  it('rolls back by itself when the health gate fails', async () => {
    const before = nodes().map((n) => n.id);
    // The new node is faulty: every task on it fails (an injected fault on the real node).
    const off = h.host.services.events.subscribe('node_state', (e: BusEvent) => {
      if (e.data.previous === null && e.data.kernel_id === 'analytics') h.host.services.mesh.setControl(e.data.node_id as string, { error_rate: 1 });
    });
    try {
      const c = await h.request('POST', '/automation/deployments', { body: { kernel_id: 'analytics', threads_per_node: 2 }, token: operator });
      await h.request('POST', `/automation/deployments/${c.body.id}/validate`, { token: operator });
      expect((await h.request('POST', `/automation/deployments/${c.body.id}/execute`, { token: operator })).status).to.equal(202);
      const done = await settle(c.body.id, ['succeeded', 'rolled_back', 'failed']);
      expect(done.state).to.equal('rolled_back');
      expect(done.reason).to.match(/health gate failed: 3 of 3 probes failed/);
      const rollout = done.steps.filter((s: { phase: string }) => s.phase === 'rollout');
      expect(rollout).to.have.length(1);
      expect(rollout[0].gate.ok).to.equal(false);
      const rollback = done.steps.filter((s: { phase: string }) => s.phase === 'rollback');
      expect(rollback.map((s: { action: string; node_id: string }) => [s.action, s.node_id])).to.deep.equal([['remove_node', rollout[0].node_id]]);
      expect(nodes().map((n) => n.id)).to.deep.equal(before);
      // The action of the last state change is recorded just after it.
      const names = await eventually(async () => {
        const actions = await h.request('GET', `/ops/actions/history?target=${c.body.id}`, {});
        const n = (actions.body.actions as Array<{ action: string }>).map((a) => a.action);
        return n.includes('deployment_rolled_back') ? n : null;
      });
      expect(names).to.include.members(['deployment_gate_failed', 'deployment_rolled_back']);
    } finally {
      off();
    }
  });

  it('lists and shows deployments of the tenant only', async () => {
    const list = await h.request('GET', '/automation/deployments?limit=1', { token: viewer });
    expect(list.status).to.equal(200);
    expect(list.body.deployments).to.have.length(1);
    expect(list.body.next_cursor).to.be.a('string');
    const page2 = await h.request('GET', `/automation/deployments?limit=1&cursor=${list.body.next_cursor}`, { token: viewer });
    expect(page2.body.deployments[0].id).to.not.equal(list.body.deployments[0].id);
    expect((await h.request('GET', '/automation/deployments?state=rolled_back', { token: viewer })).body.deployments).to.have.length(2);
    expect((await h.request('GET', '/automation/deployments?state=bogus', { token: viewer })).status).to.equal(422);
    expect((await h.request('GET', '/automation/deployments', { token: other })).body.deployments).to.deep.equal([]);
    const id = list.body.deployments[0].id;
    expect((await h.request('GET', `/automation/deployments/${id}`, { token: other })).status).to.equal(404);
    expect((await h.request('POST', `/automation/deployments/${id}/validate`, { token: other })).status).to.equal(404);
    expect((await h.request('POST', `/automation/deployments/${id}/rollback`, { token: viewer })).status).to.equal(403);
    expect((await h.request('POST', `/automation/deployments/${crypto.randomUUID()}/execute`, { token: operator })).status).to.equal(404);
    expect((await h.request('GET', '/automation/deployments', { token: null })).status).to.equal(401);
  });

  it('marks a deployment invalid when capacity is missing', async () => {
    const c = await h.request('POST', '/automation/deployments', { body: { kernel_id: 'analytics', nodes: 16 }, token: operator });
    const v = await h.request('POST', `/automation/deployments/${c.body.id}/validate`, { token: operator });
    expect(v.body.state).to.equal('invalid');
    expect(v.body.reason).to.contain('node_capacity');
    expect((await h.request('POST', `/automation/deployments/${c.body.id}/execute`, { token: operator })).status).to.equal(409);
  });
});
