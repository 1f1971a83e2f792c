import { expect } from 'chai';
import agi from '../../../plugins/agi';
import observability from '../../../plugins/observability';
import auth from '../../../plugins/auth';
import chaos from '../../../plugins/chaos';
import incidents from '../../../plugins/incidents';
import mesh from '../../../plugins/mesh';
import stability from '../../../plugins/stability';
import { BUILTIN_KERNELS, FIXTURE_KERNELS } from '../../core/mesh-helpers';
import { startHost, type TestHost } from '../../helpers/host';

// With the agi plugin installed, a failure analysis is an insight chain of the agent failure-analysis.
describe('failure analyses as insight chains (with the agi plugin)', () => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ plugins: [auth, mesh, chaos, incidents, stability, observability, agi], config: { mesh: { kernelDirs: [BUILTIN_KERNELS, FIXTURE_KERNELS], only: ['probe'] } } });
  });
  after(() => t.stop());

  it('records the incident, the candidate causes and the first suspect; answered, no change recommended', async () => {
    expect((await t.request('POST', '/mesh/nodes/probe-1/pause', { body: {} })).status).to.equal(200);
    expect((await t.request('POST', '/mesh/nodes/probe-1/resume', { body: {} })).status).to.equal(200);
    const i = await t.request('POST', '/incidents/detect', { body: { title: 'probe stalls', severity: 'low', kernel_id: 'probe', node_id: 'probe-1' } });
    const viewer = await t.userToken('viewer');
    const r = await t.request('POST', '/stability/failure/analyze', { token: viewer.token, body: { kind: 'incident', id: i.body.id } });
    expect(r.status).to.equal(200);
    expect(r.body.insight_chain_id).to.be.a('string');
    const chain = (await t.request('GET', `/agi/insight_chains/${r.body.insight_chain_id}`, { token: viewer.token })).body;
    expect(chain).to.include({ agent_id: 'failure-analysis', topic: 'failure_analysis:incident', recommendation: null });
    expect(chain.decision).to.include({ state: 'answered', by: viewer.userId });
    // Every record of the analysis is an observation, with its summary.
    expect(chain.observations.map((o: any) => o.detail.summary).sort()).to.deep.equal(r.body.chain.map((l: any) => l.summary).sort());
    const first = chain.inferences.find((x: any) => x.text.startsWith('first suspect: '));
    expect(first.text).to.equal(`first suspect: ${r.body.first_suspect.summary}`);
    expect(chain.observations.find((o: any) => o.id === first.from[0]).detail.summary).to.equal(r.body.first_suspect.summary);
    expect(chain.inferences[0].from).to.have.length(1);
    expect(chain.observations.find((o: any) => o.id === chain.inferences[0].from[0]).metric).to.equal('evidence.incident');
    const agents = (await t.request('GET', '/agi/agents', { token: viewer.token })).body.agents.map((a: any) => `${a.id}:${a.kind}`);
    expect(agents).to.include('failure-analysis:analysis');
  });
});
