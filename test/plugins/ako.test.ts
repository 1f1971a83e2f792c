import { expect } from 'chai';
import ako from '../../plugins/ako';
import { BUILTIN_KERNELS, FIXTURE_KERNELS } from '../core/mesh-helpers';
import { eventually } from '../helpers/eventually';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

const MISSING = '00000000-0000-4000-8000-000000000000';

eachDatabase('ako plugin', (db) => {
  let t: TestHost;
  let op: string;
  let member: string;
  let viewer: string;
  before(async () => {
    t = await startHost({
      db,
      plugins: [ako],
      config: {
        mesh: {
          kernelDirs: [BUILTIN_KERNELS, FIXTURE_KERNELS],
          only: ['analytics', 'probe'],
          heartbeatMs: 100,
          kernels: { probe: { nodes: 3 }, analytics: { threads: 2 } },
          // The breaker stays closed: these tests look at nodes, not at isolation.
          breaker: { volumeThreshold: 1000 },
        },
        ako: { windowSeconds: 60, minTasks: 4, queueWaitP90Ms: 50, utilisationLow: 0.05, maxNodesPerKernel: 4 },
      },
    });
    op = (await t.userToken('operator')).token;
    member = (await t.userToken('member')).token;
    viewer = (await t.userToken('viewer')).token;
  });
  after(() => t.stop());

  const recompute = (token = op) => t.request('POST', '/ops/ako/recompute', { token });
  const apply = (id: string, token = op) => t.request('POST', `/ops/ako/actions/${id}/apply`, { token });
  const find = (ps: Array<{ action: string; target_id: string }>, action: string, target: string) => ps.find((p) => p.action === action && p.target_id === target) as any;

  it('proposes removing a surplus node and a surplus thread on idle kernels; supersedes earlier proposals', async () => {
    const first = await recompute();
    expect(first.status).to.equal(200);
    const again = await recompute();
    expect(again.body.superseded).to.equal(first.body.proposals.length);
    const remove = find(again.body.proposals, 'remove_node', 'probe-3');
    expect(remove).to.include({ kernel_id: 'probe', status: 'proposed', target_type: 'node' });
    expect(remove.evidence.node).to.include({ node_id: 'probe-3', state: 'active' });
    expect(remove.thresholds).to.deep.equal({ utilisationLow: 0.05, queueWaitP90Ms: 50 });
    const threads = find(again.body.proposals, 'set_threads', 'analytics-1');
    expect(threads.params).to.deep.equal({ threads: 1 });
    // An old proposal is superseded: 409.
    const old = find(first.body.proposals, 'remove_node', 'probe-3');
    const r = await apply(old.id);
    expect(r.status).to.equal(409);
    expect(r.body.detail).to.match(/superseded/);

    const applied = await apply(remove.id);
    expect(applied.status).to.equal(200);
    expect(applied.body).to.include({ status: 'applied', error: null });
    expect(t.host.services.mesh.nodes().map((n) => n.id)).to.not.include('probe-3');
    expect((await apply(threads.id)).body.status).to.equal('applied');
    expect(t.host.services.mesh.node('analytics-1').threads).to.equal(1);
    expect((await apply(remove.id)).status).to.equal(409);
    const h = await t.host.services.actions.list({ limit: 50, target_id: 'probe-3' });
    expect(h.actions.map((a) => a.action)).to.deep.equal(['apply_ako_action', 'remove_node', 'complete_drain', 'drain_node']);
    expect(h.actions[1].cause).to.match(new RegExp(`^ako:${remove.id}`));
  });

  it('proposes draining a node whose tasks fail, with the evidence; apply drains it for real', async () => {
    const mesh = t.host.services.mesh;
    mesh.setControl('probe-2', { error_rate: 1 });
    try {
      for (let i = 0; i < 12; i++) await mesh.run('probe', 'wait', { ms: 1 }).catch(() => undefined);
    } finally {
      mesh.setControl('probe-2', null);
    }
    const r = await recompute();
    const drain = find(r.body.proposals, 'drain_node', 'probe-2');
    expect(drain, JSON.stringify(r.body.proposals)).to.not.equal(undefined);
    expect(drain.evidence.node).to.include({ node_id: 'probe-2', failed: 6, tasks: 6, error_rate: 1 });
    expect(drain.thresholds).to.deep.equal({ errorRateDrain: 0.5, minTasks: 4 });
    expect(find(r.body.proposals, 'drain_node', 'probe-1')).to.equal(undefined);
    const k = r.body.kernels.find((x: { kernel_id: string }) => x.kernel_id === 'probe');
    expect(k).to.include({ tasks: 12, failed: 6 });
    // Someone drained it meanwhile: the mesh refuses, the proposal fails, and may be applied again later.
    const manual = { source: 'manual' as const, actor: 'test' };
    await mesh.drainNode('probe-2', {}, manual);
    const refused = await apply(drain.id);
    expect(refused.status).to.equal(409);
    expect(refused.body.detail).to.match(/already draining/);
    const failed = (await t.request('GET', '/ops/ako/actions?status=failed', { token: viewer })).body.actions;
    expect(failed.map((x: { id: string }) => x.id)).to.include(drain.id);
    const rec = await t.host.services.actions.list({ limit: 1, action: 'apply_ako_action', target_id: 'probe-2' });
    expect(rec.actions[0]).to.include({ result: 'refused', cause: `ako:${drain.id}` });
    await mesh.abortDrain('probe-2', manual);
    const a = await apply(drain.id);
    expect(a.status).to.equal(200);
    expect(mesh.node('probe-2').state).to.equal('draining');
    expect(a.body.result).to.include({ node_id: 'probe-2', state: 'draining' });
  });

  it('proposes adding a node when queued tasks wait too long; apply adds it', async () => {
    const mesh = t.host.services.mesh;
    await Promise.all(Array.from({ length: 6 }, () => mesh.run('probe', 'wait', { ms: 100 })));
    const r = await recompute();
    const add = find(r.body.proposals, 'add_node', 'probe');
    expect(add, JSON.stringify(r.body.proposals)).to.not.equal(undefined);
    expect(add.evidence.queue_wait_p90_ms).to.be.at.least(50);
    expect(add.params).to.deep.equal({ threads: 1 });
    const before = mesh.kernel('probe').nodes.length;
    const a = await apply(add.id);
    expect(a.status).to.equal(200);
    expect(mesh.kernel('probe').nodes.length).to.equal(before + 1);
    await eventually(() => mesh.kernel('probe').nodes.some((n) => n.live_threads.length > 0 && n.id === a.body.result.id), 5000, 'the new node to start');
  });

  it('GET /ops/ako/actions lists with filters and pages; auth rules; 404, 422', async () => {
    const all = await t.request('GET', '/ops/ako/actions', { token: viewer });
    expect(all.status).to.equal(200);
    expect(all.body.actions.length).to.be.at.least(5);
    const applied = await t.request('GET', '/ops/ako/actions?status=applied&kernel_id=probe', { token: viewer });
    expect(applied.body.actions.map((a: { action: string }) => a.action).sort()).to.deep.equal(['add_node', 'drain_node', 'remove_node']);
    const first = await t.request('GET', '/ops/ako/actions?limit=1', { token: viewer });
    const second = await t.request('GET', `/ops/ako/actions?limit=1&cursor=${first.body.next_cursor}`, { token: viewer });
    expect(second.body.actions[0].id).to.equal(all.body.actions[1].id);
    expect((await t.request('GET', '/ops/ako/actions?status=done', { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', '/ops/ako/actions?cursor=zz', { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', '/ops/ako/actions', { token: null })).status).to.equal(401);
    expect((await recompute(member)).status).to.equal(403);
    expect((await recompute(null as unknown as string)).status).to.equal(401);
    const id = all.body.actions[0].id;
    expect((await apply(id, member)).status).to.equal(403);
    expect((await apply(id, null as unknown as string)).status).to.equal(401);
    expect((await apply(MISSING)).status).to.equal(404);
    expect((await apply('nope')).status).to.equal(422);
  });
});
