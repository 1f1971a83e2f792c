import { expect } from 'chai';
import agi from '../../plugins/agi';
import observability from '../../plugins/observability';
import ako from '../../plugins/ako';
import { BUILTIN_KERNELS, FIXTURE_KERNELS } from '../core/mesh-helpers';
import { eventually } from '../helpers/eventually';
import { startHost, type TestHost } from '../helpers/host';

// With the agi plugin installed, every AKO proposal is an insight chain of the agent `ako`.
describe('ako proposals as insight chains (with the agi plugin)', () => {
  let t: TestHost;
  before(async () => {
    t = await startHost({
      plugins: [ako, agi, observability],
      config: {
        mesh: { kernelDirs: [BUILTIN_KERNELS, FIXTURE_KERNELS], only: ['probe'], heartbeatMs: 100, kernels: { probe: { nodes: 1 } }, breaker: { volumeThreshold: 1000 } },
        ako: { windowSeconds: 60, minTasks: 4, queueWaitP90Ms: 50, maxNodesPerKernel: 4 },
      },
    });
  });
  after(() => t.stop());

  it('records the figures, the crossed threshold and the change; apply decides it and measures the prediction', async () => {
    const mesh = t.host.services.mesh;
    await Promise.all(Array.from({ length: 6 }, () => mesh.run('probe', 'wait', { ms: 100 })));
    const r = await t.request('POST', '/ops/ako/recompute');
    const add = r.body.proposals.find((p: any) => p.action === 'add_node');
    expect(add, JSON.stringify(r.body.proposals)).to.not.equal(undefined);
    expect(add.chain_id).to.be.a('string');
    const chain = (await t.request('GET', `/agi/insight_chains/${add.chain_id}`)).body;
    expect(chain).to.include({ agent_id: 'ako', topic: 'ako:add_node', tenant_id: 'platform' });
    const wait = chain.observations.find((o: any) => o.metric === 'ako.queue_wait_p90_ms');
    expect(wait.value).to.equal(add.evidence.queue_wait_p90_ms);
    expect(chain.observations.find((o: any) => o.metric === 'kernel_active_nodes').value).to.equal(1);
    expect(chain.inferences).to.deep.include({ id: 'i1', text: 'queued tasks wait 50 ms or more (p90)', from: ['o4'], rule: { observation: 'o4', op: '>=', threshold: 50 } });
    expect(chain.recommendation).to.deep.include({ action: 'add_node', target: 'probe', params: { threads: 1 } });
    expect(chain.recommendation.prediction).to.deep.equal({ metric: 'kernel_active_nodes', params: { kernel: 'probe' }, value: 2 });
    expect(chain.decision.state).to.equal('none');
    // The agent's chain list names it.
    const mine = await t.request('GET', '/agi/agents/ako/insight_chains');
    expect(mine.body.insight_chains.map((c: any) => c.id)).to.include(add.chain_id);

    const operator = await t.userToken('operator');
    const applied = await t.request('POST', `/ops/ako/actions/${add.id}/apply`, { token: operator.token });
    expect(applied.status).to.equal(200);
    const after = await eventually(async () => {
      const c = (await t.request('GET', `/agi/insight_chains/${add.chain_id}`)).body;
      return c.outcome ? c : null;
    });
    expect(after.decision).to.include({ state: 'applied', by: operator.userId });
    expect(after.outcome).to.include({ metric: 'kernel_active_nodes', predicted: 2, value: 2, error: 0 });
  });

  it('expires the chains of proposals a later recompute supersedes', async () => {
    const first = await t.request('POST', '/ops/ako/recompute');
    const chains = first.body.proposals.map((p: any) => p.chain_id as string);
    expect(chains.length).to.be.greaterThan(0);
    await t.request('POST', '/ops/ako/recompute');
    for (const id of chains) expect((await t.request('GET', `/agi/insight_chains/${id}`)).body.decision).to.deep.include({ state: 'expired', detail: 'superseded by a later recompute' });
  });
});
