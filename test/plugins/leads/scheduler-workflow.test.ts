import { expect } from 'chai';
import leads from '../../../plugins/leads';
import { sign } from '../../../plugins/leads/webhook';
import workflows from '../../../plugins/workflows';
import { BUILTIN_KERNELS } from '../../core/mesh-helpers';
import { eventually } from '../../helpers/eventually';
import { startHost, type TestHost } from '../../helpers/host';

const SECRET = 'scheduler-secret-for-tests';

describe('the scheduler webhook runs a workflow (event workflow.run)', () => {
  let t: TestHost;
  let workflowId: string;
  let acmeWorkflowId: string;
  before(async () => {
    t = await startHost({
      plugins: [leads, workflows],
      config: { webhooks: { schedulerSecret: SECRET }, mesh: { kernelDirs: [BUILTIN_KERNELS], only: ['analytics'] } },
    });
    const steps = [{ id: 'stats', kernel: 'analytics', task: 'describe', input: { values: [1, 2, 3, 4] } }];
    workflowId = (await t.request('POST', '/workflows', { body: { name: 'nightly stats', steps } })).body.id;
    const acme = (await t.userToken('member', 'acme')).token;
    acmeWorkflowId = (await t.request('POST', '/workflows', { token: acme, body: { name: 'acme stats', steps } })).body.id;
  });
  after(() => t.stop());

  const deliver = (payload: unknown, id: string) => {
    const raw = JSON.stringify(payload);
    const ts = String(Math.floor(Date.now() / 1000));
    return t.request('POST', '/webhooks/scheduler', { token: null, raw, headers: { 'x-scheduler-timestamp': ts, 'x-scheduler-signature': sign(SECRET, ts, raw), 'x-scheduler-delivery': id } });
  };

  it('starts the workflow of the configured tenant as webhook:scheduler, once per delivery', async () => {
    const r = await deliver({ event: 'workflow.run', data: { workflow_id: workflowId } }, 'run-1');
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ delivery_id: 'run-1', event: 'workflow.run', action: 'run_workflow', lead_id: null });
    const execId = r.body.execution_id as string;
    const done = await eventually(async () => {
      const x = await t.request('GET', `/ops/workflows/${execId}`);
      return x.body.state === 'succeeded' ? x.body : null;
    });
    expect(done).to.include({ workflow_id: workflowId, created_by: 'webhook:scheduler' });
    expect(done.steps[0].output.count).to.equal(4);
    const row = await t.host.services.db('webhook_deliveries').where({ id: 'run-1' }).first();
    expect(row).to.include({ action: 'run_workflow', execution_id: execId });
    const logged = await eventually(() => t.host.services.db('actions').where({ action: 'run_workflow', target_id: execId }).first());
    expect(logged).to.include({ actor: 'scheduler_webhook', cause: 'run-1', target_type: 'workflow_execution' });

    const again = await deliver({ event: 'workflow.run', data: { workflow_id: workflowId } }, 'run-1');
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('REPLAYED');
    const runs = await t.host.services.db('workflow_executions').where({ workflow_id: workflowId });
    expect(runs).to.have.length(1);
  });

  it("answers 422 for an unknown workflow or another tenant's, stores no delivery, and a retry with the same id then works", async () => {
    for (const id of ['no-such-workflow', acmeWorkflowId]) {
      const r = await deliver({ event: 'workflow.run', data: { workflow_id: id } }, 'run-2');
      expect(r.status).to.equal(422);
      expect(r.body.detail[0].loc).to.deep.equal(['body', 'data', 'workflow_id']);
    }
    expect(await t.host.services.db('webhook_deliveries').where({ id: 'run-2' })).to.deep.equal([]);
    expect((await deliver({ event: 'workflow.run', data: { workflow_id: '' } }, 'run-2')).status).to.equal(422);
    const ok = await deliver({ event: 'workflow.run', data: { workflow_id: workflowId } }, 'run-2');
    expect(ok.status).to.equal(200);
  });
});
