import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { expect } from 'chai';
import { eventually } from '../../helpers/eventually';
import { startHost, type TestHost } from '../../helpers/host';

describe('automation: health checks, readiness and the scheduler', function () {
  this.timeout(30_000);
  let h: TestHost;
  let viewer: string;
  let operator: string;
  let tcp: net.Server;
  let tcpPort: number;

  before(async () => {
    tcp = net.createServer((s) => s.end());
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', () => r()));
    tcpPort = (tcp.address() as net.AddressInfo).port;
    // A job every second, so that the scheduler's own runs can be seen.
    h = await startHost({ config: { mesh: { only: ['analytics'] }, automation: { scheduler: { healthCron: '* * * * * *', leaseMs: 1000 } } } });
    viewer = (await h.userToken('viewer')).token;
    operator = (await h.userToken('operator')).token;
  });
  after(async () => {
    await h?.stop();
    tcp?.close();
  });

  it('runs real probes against the targets given', async () => {
    const r = await h.request('POST', '/automation/health/check', {
      body: {
        targets: [
          { name: 'api', kind: 'http', url: `${h.url}/health` },
          { name: 'tcp-open', kind: 'tcp', host: '127.0.0.1', port: tcpPort },
          { name: 'tcp-closed', kind: 'tcp', host: '127.0.0.1', port: 1 },
          { name: 'analytics', kind: 'kernel', domain: 'analytics' },
          { name: 'db', kind: 'database' },
        ],
      },
      token: operator,
    });
    expect(r.status).to.equal(200);
    const by = Object.fromEntries(r.body.results.map((x: { target: string; ok: boolean }) => [x.target, x.ok]));
    expect(by).to.deep.equal({ api: true, 'tcp-open': true, 'tcp-closed': false, analytics: true, db: true });
    expect(r.body.healthy).to.equal(false);
    const status = await h.request('GET', '/automation/health/status', { token: viewer });
    expect(status.status).to.equal(200);
    expect(status.body.targets.find((t: { target: string }) => t.target === 'tcp-closed').ok).to.equal(false);
  });

  it('probes the database and every kernel by default; refuses bad targets and low roles', async () => {
    const r = await h.request('POST', '/automation/health/check', { body: {}, token: operator });
    expect(r.body.results.map((x: { target: string }) => x.target)).to.deep.equal(['database', 'kernel:analytics']);
    expect(r.body.healthy).to.equal(true);
    expect((await h.request('POST', '/automation/health/check', { body: { targets: [{ name: 'x', kind: 'kernel', domain: 'nope' }] }, token: operator })).status).to.equal(422);
    expect((await h.request('POST', '/automation/health/check', { body: { targets: [{ name: 'x', kind: 'smtp' }] }, token: operator })).status).to.equal(422);
    expect((await h.request('POST', '/automation/health/check', { body: {}, token: viewer })).status).to.equal(403);
    expect((await h.request('GET', '/automation/health/status', { token: null })).status).to.equal(401);
  });

  it('reports production readiness from live checks with their evidence', async () => {
    expect((await h.request('GET', '/automation/readiness/report', { token: viewer })).status).to.equal(404);
    expect((await h.request('POST', '/automation/readiness/validate', { token: viewer })).status).to.equal(403);
    const r = await h.request('POST', '/automation/readiness/validate', { token: operator });
    expect(r.status).to.equal(201);
    const by = Object.fromEntries(r.body.checks.map((c: { name: string; ok: boolean }) => [c.name, c.ok]));
    // The test host keeps the bootstrap admin password, has no JWT_SECRET, no HTTPS and no subscriptions.
    expect(by).to.deep.equal({
      admin_password_changed: false, jwt_secret_set: false, https_on: false, backups_possible: true, alert_subscriptions: false, slos_defined: true, no_open_critical_incidents: true,
    });
    expect(r.body.ready).to.equal(false);
    const rep = await h.request('GET', '/automation/readiness/report', { token: viewer });
    expect(rep.body.id).to.equal(r.body.id);
    expect((await h.request('GET', '/automation/readiness/report', { token: null })).status).to.equal(401);
  });

  it('runs jobs on their cron on the host holding the lease; stop and start persist', async () => {
    const s = await eventually(async () => {
      const r = await h.request('GET', '/automation/monitoring/scheduler/status', { token: viewer });
      const job = r.body.jobs.find((j: { name: string }) => j.name === 'health_check');
      return job.last_run?.trigger === 'cron' ? r.body : null;
    }, 10_000);
    expect(s.running).to.equal(true);
    expect(s.this_host_runs_jobs).to.equal(true);
    expect(s.runner).to.equal(s.this_host);
    expect((await h.request('POST', '/automation/monitoring/scheduler/stop', { token: viewer })).status).to.equal(403);
    const stopped = await h.request('POST', '/automation/monitoring/scheduler/stop', { token: operator });
    expect(stopped.status).to.equal(200);
    expect(stopped.body.running).to.equal(false);
    expect(stopped.body.runner).to.equal(null);
    expect(stopped.body.jobs.every((j: { next_run: string | null }) => j.next_run === null)).to.equal(true);
    const row = await h.host.services.db('automation_scheduler').where({ id: 'main' }).first();
    expect(!!row.running).to.equal(false);
    const started = await h.request('POST', '/automation/monitoring/scheduler/start', { token: operator });
    expect(started.body.running).to.equal(true);
    expect(started.body.this_host_runs_jobs).to.equal(true);
    expect((await h.request('GET', '/automation/monitoring/scheduler/status', { token: null })).status).to.equal(401);
  });

  it('leaves the jobs to another host while it holds a valid lease', async () => {
    await h.host.services.db('leases').where({ name: 'automation.scheduler' }).update({ owner: 'other-host', lease_until: new Date(Date.now() + 60_000).toISOString() });
    const s = await h.request('GET', '/automation/monitoring/scheduler/status', { token: viewer });
    expect(s.body.runner).to.equal('other-host');
    expect(s.body.this_host_runs_jobs).to.equal(false);
    // Once its lease runs out, this host takes over.
    await h.host.services.db('leases').where({ name: 'automation.scheduler' }).update({ lease_until: new Date(Date.now() - 1).toISOString() });
    await eventually(async () => (await h.request('GET', '/automation/monitoring/scheduler/status', { token: viewer })).body.this_host_runs_jobs);
  });

  it('runs every check at once on request', async () => {
    expect((await h.request('POST', '/automation/monitoring/check/immediate', { token: viewer })).status).to.equal(403);
    const r = await h.request('POST', '/automation/monitoring/check/immediate', { token: operator });
    expect(r.status).to.equal(200);
    expect(Object.keys(r.body.runs).sort()).to.deep.equal(['certificate_renewal', 'database_backup', 'health_check', 'https_check']);
    expect(r.body.runs.health_check.trigger).to.equal('immediate');
    expect(r.body.runs.certificate_renewal.summary).to.deep.equal({ renewed: [], failed: [] });
    // The backup is a real copy of the database in <dataDir>/backups, which the compliance control reads.
    const b = r.body.runs.database_backup;
    expect(b.ok, JSON.stringify(b.summary)).to.equal(true);
    expect(path.dirname(b.summary.file)).to.equal(path.join(h.dataDir, 'backups'));
    expect(b.summary.bytes).to.equal(fs.statSync(b.summary.file).size).and.to.be.greaterThan(0);
    const copy = new sqlite3.Database(b.summary.file, sqlite3.OPEN_READONLY);
    const users = await new Promise<number>((res, rej) => copy.get('SELECT count(*) AS n FROM users', (err, row: { n: number }) => (err ? rej(err) : res(row.n))));
    copy.close();
    expect(users).to.equal(Number((await h.host.services.db('users').count({ n: '*' }))[0].n));
    // Only the newest backupKeep are kept.
    const sched = h.host.services.config.automation.scheduler;
    sched.backupKeep = 1;
    try {
      const again = await h.request('POST', '/automation/monitoring/check/immediate', { token: operator });
      expect(again.body.runs.database_backup.summary.removed).to.deep.equal([path.basename(b.summary.file)]);
      expect(fs.readdirSync(path.join(h.dataDir, 'backups')), JSON.stringify(again.body.runs.database_backup)).to.deep.equal([path.basename(again.body.runs.database_backup.summary.file)]);
    } finally {
      sched.backupKeep = 7;
    }
    expect((await h.request('POST', '/automation/monitoring/check/immediate', { token: null })).status).to.equal(401);
  });

  it('answers 503 NOT_CONFIGURED for ACME without a directory, and 409 to verify without HTTPS', async () => {
    const r = await h.request('POST', '/automation/certificates/provision', { body: { names: ['a.example'], issuer: 'acme' }, token: operator });
    expect(r.status).to.equal(503);
    expect(r.body.code).to.equal('NOT_CONFIGURED');
    expect(r.body.config_key).to.equal('automation.acme.directoryUrl');
    const v = await h.request('POST', '/automation/https/verify', { body: {}, token: operator });
    expect(v.status).to.equal(409);
    expect(v.body.code).to.equal('INVALID_STATE');
    const st = await h.request('GET', '/automation/https/status', { token: viewer });
    expect(st.body.enabled).to.equal(false);
  });
});
