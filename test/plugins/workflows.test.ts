import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { BusEvent } from '../../core/events';
import opsMesh from '../../plugins/ops-mesh';
import workflows from '../../plugins/workflows';
import { BUILTIN_KERNELS, FIXTURE_KERNELS, openStream } from '../core/mesh-helpers';
import { eventually } from '../helpers/eventually';
import { dropSchema, eachDatabase, startHost, type DbKind, type TestHost } from '../helpers/host';

const MISSING = '00000000-0000-4000-8000-000000000000';
const meshConfig = { mesh: { kernelDirs: [BUILTIN_KERNELS, FIXTURE_KERNELS], only: ['analytics', 'probe'], heartbeatMs: 100, noNodeWaitMs: 300 } };
const start = (db: DbKind, extra: { dataDir?: string; pgSchema?: string } = {}) => startHost({ db, plugins: [workflows, opsMesh], config: meshConfig, ...extra });

const twoSteps = {
  name: 'describe then percentiles',
  steps: [
    { id: 'stats', kernel: 'analytics', task: 'describe', input: { values: [1, 2, 3, 4] } },
    { id: 'pcts', kernel: 'analytics', task: 'percentiles', input: { values: ['${steps.stats.output.min}', '${steps.stats.output.max}'], percentiles: [50] } },
  ],
};

eachDatabase('workflows plugin', (db) => {
  let t: TestHost;
  let member: string;
  let viewer: string;
  let acme: string;
  before(async () => {
    t = await start(db);
    member = (await t.userToken('member')).token;
    viewer = (await t.userToken('viewer')).token;
    acme = (await t.userToken('member', 'acme')).token;
  });
  after(() => t.stop());

  const create = (body: unknown, token = member, p = '/api/workflows') => t.request('POST', p, { token, body });
  const run = (id: string, token = member) => t.request('POST', `/workflows/${id}/run`, { token });
  const exec = (id: string, token = member) => t.request('GET', `/ops/workflows/${id}`, { token });
  const finished = (id: string) => eventually(async () => {
    const r = await exec(id);
    return ['succeeded', 'failed', 'cancelled'].includes(r.body.state) && r.body;
  }, 10_000);

  describe('POST /api/workflows and GET /ops/workflows/definitions', () => {
    it('stores a checked definition (201), also at /workflows; an empty step list is valid', async () => {
      const r = await create(twoSteps);
      expect(r.status).to.equal(201);
      expect(r.body).to.include({ name: twoSteps.name, tenant_id: 'platform' });
      expect(r.body.steps).to.deep.equal(twoSteps.steps);
      const empty = await create({ name: 'nothing', steps: [] }, member, '/workflows');
      expect(empty.status).to.equal(201);
      const list = await t.request('GET', '/ops/workflows/definitions', { token: viewer });
      expect(list.status).to.equal(200);
      expect(list.body.definitions.map((d: { id: string }) => d.id).slice(0, 2)).to.deep.equal([empty.body.id, r.body.id]);
      const first = await t.request('GET', '/ops/workflows/definitions?limit=1', { token: viewer });
      const second = await t.request('GET', `/ops/workflows/definitions?limit=1&cursor=${first.body.next_cursor}`, { token: viewer });
      expect(second.body.definitions[0].id).to.equal(r.body.id);
      const other = await t.request('GET', '/ops/workflows/definitions', { token: acme });
      expect(other.body.definitions).to.deep.equal([]);
    });

    it('answers 422 naming the bad step, and stores nothing', async () => {
      const before = (await t.request('GET', '/ops/workflows/definitions', { token: member })).body.definitions.length;
      const step = (s: Record<string, unknown>) => ({ name: 'bad', steps: [{ id: 'a', kernel: 'analytics', task: 'describe', input: { values: [1] } }, { id: 'b', kernel: 'analytics', task: 'describe', input: { values: [1] }, ...s }] });
      const cases: Array<[unknown, RegExp, Array<string | number>]> = [
        [step({ kernel: 'nope' }), /step "b": unknown kernel "nope"/, ['body', 'steps', 1, 'kernel']],
        [step({ task: 'fly' }), /step "b": kernel "analytics" has no task "fly"/, ['body', 'steps', 1, 'task']],
        [step({ input: { values: [] } }), /step "b"/, ['body', 'steps', 1, 'input', 'values']],
        [step({ id: 'a' }), /step "a": duplicate step id/, ['body', 'steps', 1, 'id']],
        [step({ input: { values: '${steps.c.output.x}' } }), /names step "c", which is not an earlier step/, ['body', 'steps', 1, 'input', 'values']],
        [step({ input: { values: '${steps.b.output}' } }), /names step "b", which is not an earlier step/, ['body', 'steps', 1, 'input', 'values']],
        [step({ input: { values: '${stepz.a}' } }), /is not a reference of the form/, ['body', 'steps', 1, 'input', 'values']],
        [step({ retries: 9 }), /./, ['body', 'steps', 1, 'retries']],
        [step({ timeout_ms: 5 }), /./, ['body', 'steps', 1, 'timeout_ms']],
        [{ steps: [] }, /Field required/, ['body', 'name']],
        [{ name: 'x' }, /Field required/, ['body', 'steps']],
      ];
      for (const [body, msg, loc] of cases) {
        const r = await create(body);
        expect(r.status, JSON.stringify(body)).to.equal(422);
        expect(r.body.detail[0].loc, JSON.stringify(body)).to.deep.equal(loc);
        expect(r.body.detail[0].msg).to.match(msg);
      }
      expect((await t.request('GET', '/ops/workflows/definitions', { token: member })).body.definitions.length).to.equal(before);
      // A field holding a reference is checked when the step runs.
      expect((await create(step({ input: { values: '${steps.a.output.count}' } }))).status).to.equal(201);
    });

    it('needs member to create and viewer to list; 401 without a token, 422 bad cursor', async () => {
      expect((await create(twoSteps, viewer)).status).to.equal(403);
      expect((await create(twoSteps, null as unknown as string)).status).to.equal(401);
      expect((await t.request('GET', '/ops/workflows/definitions', { token: null })).status).to.equal(401);
      expect((await t.request('GET', '/ops/workflows/definitions?cursor=zz', { token: viewer })).status).to.equal(422);
    });
  });

  describe('running, reading and listing executions', () => {
    it('runs steps on the kernels with references resolved (202), with workflow_status events', async () => {
      const def = (await create(twoSteps)).body;
      const seen: BusEvent[] = [];
      const off = t.host.services.events.subscribe('workflow_status', (e) => seen.push(e));
      const r = await run(def.id);
      expect(r.status).to.equal(202);
      expect(r.body).to.include({ state: 'pending', workflow_id: def.id, workflow_name: def.name });
      expect(r.body.steps.map((s: { state: string }) => s.state)).to.deep.equal(['pending', 'pending']);
      const done = await finished(r.body.id);
      off();
      expect(done.state).to.equal('succeeded');
      expect(done.steps[0]).to.include({ state: 'succeeded', attempts: 1, error: null });
      expect(done.steps[0].output).to.include({ min: 1, max: 4 });
      expect(done.steps[1].output.percentiles).to.deep.equal([{ p: 50, value: 2.5 }]);
      for (const s of done.steps) {
        expect(Date.parse(s.finished_at)).to.be.at.least(Date.parse(s.started_at));
        expect(s.duration_ms).to.be.a('number');
      }
      expect(seen.filter((e) => e.data.execution_id === r.body.id).map((e) => e.data.state)).to.deep.equal(['pending', 'running', 'succeeded']);
      expect(seen[0].data.tenant_id).to.equal('platform');
      const empty = (await create({ name: 'empty', steps: [] })).body;
      expect((await finished((await run(empty.id)).body.id)).state).to.equal('succeeded');
    });

    it("streams workflow_status on /ops/stream to the execution's tenant only", async () => {
      const mine = await openStream(t, viewer);
      const theirs = await openStream(t, acme);
      try {
        const def = (await create({ name: 'streamed', steps: [] })).body;
        const id = (await run(def.id)).body.id;
        const done = await mine.next((m) => m.type === 'workflow_status' && m.data.execution_id === id && m.data.state === 'succeeded');
        expect(done.data).to.include({ tenant_id: 'platform', previous: 'running' });
        const acmeDef = (await create({ name: 'theirs', steps: [] }, acme)).body;
        const acmeRun = (await run(acmeDef.id, acme)).body.id;
        await theirs.next((m) => m.type === 'workflow_status' && m.data.execution_id === acmeRun && m.data.state === 'succeeded');
        expect(theirs.messages.some((m) => m.data?.execution_id === id)).to.equal(false);
        expect(mine.messages.some((m) => m.data?.execution_id === acmeRun)).to.equal(false);
      } finally {
        await mine.close();
        await theirs.close();
      }
    });

    it('fails a step whose reference finds nothing, skipping the rest', async () => {
      const def = (await create({ name: 'broken ref', steps: [twoSteps.steps[0], { id: 'b', kernel: 'analytics', task: 'describe', input: { values: ['${steps.stats.output.nope}'] } }, { id: 'c', kernel: 'analytics', task: 'describe', input: { values: [1] } }] })).body;
      const done = await finished((await run(def.id)).body.id);
      expect(done.state).to.equal('failed');
      expect(done.error).to.match(/step "b" failed: .*nothing at "nope"/);
      expect(done.steps.map((s: { state: string }) => s.state)).to.deep.equal(['succeeded', 'failed', 'skipped']);
    });

    it('retries a failing task, then fails with the kernel error', async () => {
      t.host.services.mesh.setControl('probe-1', { error_rate: 1 });
      try {
        const def = (await create({ name: 'flaky', steps: [{ id: 'w', kernel: 'probe', task: 'wait', input: { ms: 1 }, retries: 2 }] })).body;
        const done = await finished((await run(def.id)).body.id);
        expect(done.state).to.equal('failed');
        expect(done.steps[0]).to.include({ state: 'failed', attempts: 3 });
        expect(done.steps[0].error).to.match(/injected failure/);
      } finally {
        t.host.services.mesh.setControl('probe-1', null);
      }
    });

    it('lists executions by status and pages; 404 unknown or other tenant; auth and bad input', async () => {
      const all = await t.request('GET', '/ops/workflows?status=succeeded', { token: viewer });
      expect(all.status).to.equal(200);
      expect(all.body.executions.length).to.be.at.least(2);
      expect(all.body.executions.every((e: { state: string }) => e.state === 'succeeded')).to.equal(true);
      const first = await t.request('GET', '/ops/workflows?status=succeeded&limit=1', { token: viewer });
      const second = await t.request('GET', `/ops/workflows?status=succeeded&limit=1&cursor=${first.body.next_cursor}`, { token: viewer });
      expect(second.body.executions[0].id).to.equal(all.body.executions[1].id);
      const failed = await t.request('GET', '/ops/workflows?status=failed', { token: viewer });
      expect(failed.body.executions.length).to.be.at.least(2);
      const id = all.body.executions[0].id;
      expect((await exec(id, viewer)).status).to.equal(200);
      expect((await exec(id, acme)).status).to.equal(404);
      expect((await exec(MISSING)).status).to.equal(404);
      expect((await exec('nope')).status).to.equal(422);
      const theirs = (await t.request('GET', '/ops/workflows', { token: acme })).body.executions;
      expect(theirs.every((e: { tenant_id: string }) => e.tenant_id === 'acme')).to.equal(true);
      expect(theirs.map((e: { id: string }) => e.id)).to.not.include(id);
      expect((await t.request('GET', '/ops/workflows?status=done', { token: viewer })).status).to.equal(422);
      expect((await t.request('GET', '/ops/workflows', { token: null })).status).to.equal(401);
      expect((await exec(id, null as unknown as string)).status).to.equal(401);
    });

    it('run: 404 unknown or other tenant definition, 403 viewer, 401, 422 bad id', async () => {
      const def = (await create({ name: 'mine', steps: [] })).body;
      expect((await run(MISSING)).status).to.equal(404);
      expect((await run(def.id, acme)).status).to.equal(404);
      expect((await run(def.id, viewer)).status).to.equal(403);
      expect((await run(def.id, null as unknown as string)).status).to.equal(401);
      expect((await run('x')).status).to.equal(422);
    });
  });

  describe('POST /ops/workflows/{id}/cancel', () => {
    it('aborts the running task on its worker and skips the rest; 409 once finished', async () => {
      const def = (await create({ name: 'slow', steps: [{ id: 'slow', kernel: 'probe', task: 'wait', input: { ms: 30_000 } }, { id: 'after', kernel: 'probe', task: 'wait', input: { ms: 1 } }] })).body;
      const id = (await run(def.id)).body.id;
      await eventually(async () => (await exec(id)).body.steps[0].state === 'running' && t.host.services.mesh.node('probe-1').in_flight === 1, 5000, 'the task to run');
      expect((await t.request('POST', `/ops/workflows/${id}/cancel`, { token: viewer })).status).to.equal(403);
      expect((await t.request('POST', `/ops/workflows/${id}/cancel`, { token: acme })).status).to.equal(404);
      const t0 = Date.now();
      const r = await t.request('POST', `/ops/workflows/${id}/cancel`, { token: member });
      expect(r.status).to.equal(200);
      expect(Date.now() - t0).to.be.below(10_000);
      expect(r.body.state).to.equal('cancelled');
      expect(r.body.steps.map((s: { state: string }) => s.state)).to.deep.equal(['cancelled', 'skipped']);
      expect(t.host.services.mesh.node('probe-1').in_flight).to.equal(0);
      const again = await t.request('POST', `/ops/workflows/${id}/cancel`, { token: member });
      expect(again.status).to.equal(409);
      expect(again.body.detail).to.match(/is cancelled/);
      expect((await t.request('POST', `/ops/workflows/${MISSING}/cancel`, { token: member })).status).to.equal(404);
      expect((await t.request('POST', `/ops/workflows/${id}/cancel`, { token: null })).status).to.equal(401);
      expect((await t.request('POST', '/ops/workflows/bad/cancel', { token: member })).status).to.equal(422);
      // The node takes work again.
      const ok = (await create({ name: 'quick', steps: [{ id: 'q', kernel: 'probe', task: 'wait', input: { ms: 1 } }] })).body;
      expect((await finished((await run(ok.id)).body.id)).state).to.equal('succeeded');
    });

    it('cancels in storage an execution this host does not run (another host, or one that died)', async () => {
      const def = (await create({ name: 'elsewhere', steps: [{ id: 'a', kernel: 'probe', task: 'wait', input: { ms: 1 } }, { id: 'b', kernel: 'probe', task: 'wait', input: { ms: 1 } }] })).body;
      const id = crypto.randomUUID();
      const steps = [
        { id: 'a', kernel: 'probe', task: 'wait', state: 'running', attempts: 1, started_at: new Date().toISOString(), finished_at: null, duration_ms: null, output: null, error: null },
        { id: 'b', kernel: 'probe', task: 'wait', state: 'pending', attempts: 0, started_at: null, finished_at: null, duration_ms: null, output: null, error: null },
      ];
      await t.host.services.db('workflow_executions').insert({ id, tenant_id: 'platform', workflow_id: def.id, workflow_name: def.name, state: 'running', error: null, steps: JSON.stringify(steps), created_by: 'x', created_at: new Date().toISOString(), started_at: new Date().toISOString(), finished_at: null });
      const r = await t.request('POST', `/ops/workflows/${id}/cancel`, { token: member });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ state: 'cancelled', error: 'cancelled by request' });
      expect(r.body.steps.map((x: { state: string }) => x.state)).to.deep.equal(['cancelled', 'skipped']);
      expect((await t.request('POST', `/ops/workflows/${id}/cancel`, { token: member })).status).to.equal(409);
    });

    it('a runner stops before its next step when storage says the execution was finished elsewhere', async () => {
      const def = (await create({ name: 'two', steps: [{ id: 'a', kernel: 'probe', task: 'wait', input: { ms: 300 } }, { id: 'b', kernel: 'probe', task: 'wait', input: { ms: 1 } }] })).body;
      const id = (await run(def.id)).body.id;
      await eventually(async () => (await exec(id)).body.steps[0].state === 'running', 5000, 'step a to run');
      const ran = t.host.services.mesh.node('probe-1').tasks_run;
      // What a cancel on another host writes.
      await t.host.services.db('workflow_executions').where({ id }).update({ state: 'cancelled', error: 'cancelled by request' });
      await eventually(() => t.host.services.mesh.node('probe-1').tasks_run === ran + 1, 5000, 'step a to finish');
      await new Promise((r) => setTimeout(r, 100));
      expect(t.host.services.mesh.node('probe-1').tasks_run).to.equal(ran + 1);
      expect((await exec(id)).body.state).to.equal('cancelled');
    });
  });
});

eachDatabase('workflows across a restart', (db) => {
  it('an execution running when the host stopped is failed with that reason at the next start', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-wf-'));
    const pgSchema = `t_${crypto.randomBytes(6).toString('hex')}`;
    let t = await start(db, { dataDir, pgSchema });
    try {
      const member = (await t.userToken('member')).token;
      const def = (await t.request('POST', '/workflows', { token: member, body: { name: 'long', steps: [{ id: 'w', kernel: 'probe', task: 'wait', input: { ms: 30_000 } }] } })).body;
      const stopped = (await t.request('POST', `/workflows/${def.id}/run`, { token: member })).body.id;
      // The step running too (the execution is stored running a moment before its step is).
      await eventually(async () => (await t.request('GET', `/ops/workflows/${stopped}`, { token: member })).body.steps[0].state === 'running', 5000, 'running');
      // A host that died without stopping leaves its row running: simulate one.
      const crashed = crypto.randomUUID();
      const row = await t.host.services.db('workflow_executions').where({ id: stopped }).first();
      await t.host.services.db('workflow_executions').insert({ ...row, id: crashed, created_at: new Date().toISOString() });
      await t.stop();
      t = await start(db, { dataDir, pgSchema });
      for (const id of [stopped, crashed]) {
        const e = (await t.request('GET', `/ops/workflows/${id}`, { token: member })).body;
        expect(e.state, id).to.equal('failed');
        expect(e.error).to.equal('the host stopped while the execution was running');
        expect(e.steps[0].state).to.equal('failed');
      }
    } finally {
      await t.stop();
      if (db === 'postgres') await dropSchema(pgSchema);
    }
  });
});
