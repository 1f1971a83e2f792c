import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import analytics from '../../../kernels/analytics/manifest';
import { eventually } from '../../helpers/eventually';
import { eachDatabase, startHost, type TestHost } from '../../helpers/host';

/** Writes a candidate build: plugins/<id>/index.js with the migrations given (as JS source). */
function candidate(root: string, name: string, plugins: Record<string, string>, kernels: Record<string, string[]> = {}): void {
  for (const [id, migrations] of Object.entries(plugins)) {
    const dir = path.join(root, name, 'plugins', id);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'index.js'), `exports.default = { id: ${JSON.stringify(id)}, prefix: '', routes: [], migrations: ${migrations} };\n`);
  }
  for (const [domain, tasks] of Object.entries(kernels)) {
    const dir = path.join(root, name, 'kernels', domain);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'manifest.js'), `exports.default = { domain: ${JSON.stringify(domain)}, tasks: ${JSON.stringify(Object.fromEntries(tasks.map((t) => [t, {}])))} };\n`);
  }
}

const table = (name: string) => `[{ name: '001_${name}', up: async (db) => db.schema.createTable('${name}', (t) => { t.string('id'); }) }]`;

eachDatabase('automation: upgrades', (db) => {
  let h: TestHost;
  let root: string;
  let operator: string;

  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-candidates-'));
    candidate(root, 'good', { extra: table('extra_things') }, { analytics: ['describe', 'median'] });
    candidate(root, 'drift', { alpha: table('alpha_things'), beta: table('beta_things') });
    h = await startHost({ db, config: { mesh: { only: ['analytics'] }, automation: { upgrade: { candidatesDir: root }, deployments: { gateProbes: 2 } } } });
    operator = (await h.userToken('operator')).token;
  });
  after(async () => {
    await h?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const settled = (p: string) =>
    eventually(async () => {
      const r = await h.request('GET', p);
      return ['succeeded', 'failed'].includes(r.body.state) ? r.body : null;
    }, 40_000);

  it('validates the running build: nothing pending, the dry run passes', async () => {
    const v = await h.request('POST', '/upgrade/validate', { body: {} });
    expect(v.status).to.equal(202);
    const done = await settled(`/upgrade/validation/${v.body.id}`);
    expect(done.state).to.equal('succeeded');
    expect(done.report.pending_migrations).to.deep.equal({});
    expect(done.report.dry_run.ok).to.equal(true);
    expect(done.report.dry_run.database).to.contain(db === 'sqlite' ? 'online backup' : 'scratch schema');
  });

  it('refuses bad input and low roles', async () => {
    expect((await h.request('POST', '/upgrade/validate', { body: {}, token: operator })).status).to.equal(403);
    expect((await h.request('POST', '/upgrade/validate', { body: {}, token: null })).status).to.equal(401);
    expect((await h.request('POST', '/upgrade/validate', { body: { candidate: '../etc' } })).status).to.equal(422);
    expect((await h.request('POST', '/upgrade/validate', { body: { candidate: 'missing' } })).status).to.equal(422);
    expect((await h.request('GET', '/upgrade/validation/nope')).status).to.equal(422);
    expect((await h.request('GET', `/upgrade/validation/${crypto.randomUUID()}`)).status).to.equal(404);
    expect((await h.request('POST', '/upgrade/plan', { body: { validation_id: crypto.randomUUID() } })).status).to.equal(404);
    expect((await h.request('POST', '/upgrade/plan', { body: {}, token: operator })).status).to.equal(403);
    expect((await h.request('POST', '/upgrade/execute', { body: { plan_id: 'x' } })).status).to.equal(422);
    expect((await h.request('POST', '/upgrade/execute', { body: { plan_id: crypto.randomUUID() }, token: operator })).status).to.equal(403);
  });

  // The whole successful path once (SQLite); PostgreSQL runs the storage parts: dry run, backup, restore.
  if (db === 'sqlite') it('validates, plans and executes a candidate: dry run on a copy, then the real migrations and a rolling restart', async () => {
    const v = await h.request('POST', '/upgrade/validate', { body: { candidate: 'good' } });
    const done = await settled(`/upgrade/validation/${v.body.id}`);
    expect(done.state, done.reason).to.equal('succeeded');
    expect(done.report.pending_migrations).to.deep.equal({ extra: ['001_extra_things'] });
    expect(done.report.dry_run.applied).to.deep.equal(['extra/001_extra_things']);
    // The candidate's analytics kernel has describe and median: every other task of the running one is removed.
    const running = Object.keys(analytics.tasks).filter((name) => name !== 'describe').sort();
    expect(done.report.kernels.changed).to.deep.equal([{ domain: 'analytics', tasks_added: ['median'], tasks_removed: running }]);
    expect(done.report.plugins_removed).to.include('automation');
    // The dry run left the live database alone.
    expect(await h.host.services.db.schema.hasTable('extra_things')).to.equal(false);

    const plan = await h.request('POST', '/upgrade/plan', { body: { validation_id: v.body.id } });
    expect(plan.status).to.equal(201);
    expect(plan.body.report.expected_downtime_seconds).to.equal(0);
    expect(plan.body.report.steps.map((s: { action: string }) => s.action)).to.deep.equal(['backup', 'migrate', 'rolling_restart', 'verify']);
    const nodesBefore = h.host.services.mesh.kernel('analytics').nodes.map((n) => n.id);
    const x = await h.request('POST', '/upgrade/execute', { body: { plan_id: plan.body.id } });
    expect(x.status).to.equal(202);
    const run = await settled(`/upgrade/executions/${x.body.id}`);
    expect(run.state, run.reason).to.equal('succeeded');
    expect(await h.host.services.db.schema.hasTable('extra_things')).to.equal(true);
    const nodesAfter = h.host.services.mesh.kernel('analytics').nodes.filter((n) => n.state !== 'drained').map((n) => n.id);
    expect(nodesAfter).to.have.length(nodesBefore.length);
    expect(nodesAfter.some((id) => nodesBefore.includes(id))).to.equal(false);
    // A plan runs once.
    const again = await h.request('POST', '/upgrade/execute', { body: { plan_id: plan.body.id } });
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('INVALID_STATE');
  });

  it('restores the backup when a migration fails', async () => {
    const v = await h.request('POST', '/upgrade/validate', { body: { candidate: 'drift' } });
    expect((await settled(`/upgrade/validation/${v.body.id}`)).state).to.equal('succeeded');
    const plan = await h.request('POST', '/upgrade/plan', { body: { validation_id: v.body.id } });
    // The live database drifts after the validation: beta's table appears by hand.
    await h.host.services.db.schema.createTable('beta_things', (t) => t.string('id'));
    await h.host.services.db('tenants').insert({ id: 'kept-tenant', name: 'Kept', plan: 'free', domains: '[]', created_at: new Date().toISOString() });
    const x = await h.request('POST', '/upgrade/execute', { body: { plan_id: plan.body.id } });
    const run = await settled(`/upgrade/executions/${x.body.id}`);
    expect(run.state).to.equal('failed');
    expect(run.reason).to.match(/beta_things.*already exists.*the backup was restored/s);
    expect(run.report.steps.map((s: { action: string; ok: boolean }) => `${s.action}:${s.ok}`)).to.deep.equal(['backup:true', 'migrate:true', 'failed:false', 'restore:true']);
    // alpha's migration had run and was taken back with the restore; the data before stays.
    expect(await h.host.services.db.schema.hasTable('alpha_things')).to.equal(false);
    expect(await h.host.services.db('schema_migrations').where('name', 'like', 'alpha/%').first()).to.equal(undefined);
    expect(await h.host.services.db('tenants').where({ id: 'kept-tenant' }).first()).to.not.equal(undefined);
  });

  it('will not plan from a failed validation', async () => {
    // The drift table makes the dry run itself fail now.
    const v = await h.request('POST', '/upgrade/validate', { body: { candidate: 'drift' } });
    const done = await settled(`/upgrade/validation/${v.body.id}`);
    expect(done.state).to.equal('failed');
    expect(done.report.dry_run.ok).to.equal(false);
    const plan = await h.request('POST', '/upgrade/plan', { body: { validation_id: v.body.id } });
    expect(plan.status).to.equal(409);
    expect(plan.body.code).to.equal('INVALID_STATE');
  });
});
