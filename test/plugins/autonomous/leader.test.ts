import crypto from 'node:crypto';
import { expect } from 'chai';
import agi from '../../../plugins/agi';
import observability from '../../../plugins/observability';
import autonomous from '../../../plugins/autonomous';
import workflows from '../../../plugins/workflows';
import { BUILTIN_KERNELS } from '../../core/mesh-helpers';
import { eventually } from '../../helpers/eventually';
import { dropSchema, startHost, type TestHost } from '../../helpers/host';

// Two hosts on one PostgreSQL schema: a generated agent runs on one host at a time (its
// lease), and the other host takes it over when that one stops.
describe('generated agents on several hosts run on one at a time, with takeover', function () {
  this.timeout(60_000);
  const schema = `t_${crypto.randomBytes(6).toString('hex')}`;
  const start = () => startHost({ db: 'postgres', pgSchema: schema, plugins: [workflows, observability, agi, autonomous], config: { mesh: { kernelDirs: [BUILTIN_KERNELS], only: ['analytics'] } } });
  let a: TestHost;
  let b: TestHost | null = null;
  after(async () => {
    await b?.stop();
    await dropSchema(schema);
  });

  it('runs only on the host holding the lease, then on the other one', async () => {
    a = await start();
    b = await start();
    const wf = await a.request('POST', '/workflows', { body: { name: 'tick', steps: [{ id: 's1', kernel: 'analytics', task: 'describe', input: { values: [1, 2, 3] } }] } });
    // A workflow skill, as skills/generate would make one from an opportunity.
    const skill = crypto.randomUUID();
    const at = new Date().toISOString();
    await a.host.services.db('autonomous_skills').insert({ id: skill, tenant_id: 'platform', opportunity_id: crypto.randomUUID(), kind: 'workflow', name: 'tick', workflow_id: wf.body.id, steps: '[]', inputs: '[]', created_by: 'test', created_at: at, updated_at: at });
    const g = await a.request('POST', '/autonomous/agents/generate', { body: { blueprint_id: skill, schedule_seconds: 1 } });
    expect(g.status).to.equal(201);
    expect((await a.request('POST', `/autonomous/agents/${g.body.id}/deploy`, { body: {} })).status).to.equal(200);
    const hostOf = async () => (await a.host.services.db('autonomous_agents').where({ id: g.body.id }).first()) as { runs: number; last_result: string };
    // b finds the agent within its rescan; every run while both are up is a's.
    await eventually(async () => (await hostOf()).runs >= 3, 15_000);
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const before = (await hostOf()).runs;
      await eventually(async () => (await hostOf()).runs > before, 10_000);
      seen.add(JSON.parse((await hostOf()).last_result).host);
    }
    expect([...seen]).to.deep.equal([a.host.services.leases.owner]);
    expect((await a.host.services.leases.holder(`autonomous.agent:${g.body.id}`))!.owner).to.equal(a.host.services.leases.owner);
    // a stops (it gives its leases up): b runs the agent from its next tick.
    await a.stop();
    await eventually(async () => JSON.parse((await b!.host.services.db('autonomous_agents').where({ id: g.body.id }).first()).last_result).host === b!.host.services.leases.owner, 15_000);
  });
});
