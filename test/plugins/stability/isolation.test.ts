import crypto from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import { z } from 'zod';
import { discoverPlugins } from '../../../core/loader';
import { definePlugin } from '../../../core/plugin';
import { core } from '../../../core/services';
import { startHost, type TestHost } from '../../helpers/host';
import { eventually } from '../../helpers/eventually';

// A plugin that leaks on purpose: it reads a note by id without its tenant.
const leaky = definePlugin({
  id: 'leaky',
  prefix: '/leaky',
  deps: { db: core.db },
  migrations: [{ name: '001_notes', up: (db) => db.schema.createTable('leaky_notes', (t) => { t.string('id', 36).primary(); t.string('tenant_id', 64).notNullable(); t.text('text').notNullable(); }) }],
  routes: (route) => [
    route({
      method: 'post', path: '/notes', summary: 'make a note', access: 'member', status: 201,
      body: z.object({ text: z.string().min(1).max(100) }),
      response: z.object({ id: z.string(), text: z.string() }),
      handler: async ({ body, caller, services }) => {
        const id = crypto.randomUUID();
        await services.db('leaky_notes').insert({ id, tenant_id: caller!.tenantId, text: body.text });
        return { id, text: body.text };
      },
    }),
    route({
      method: 'get', path: '/notes/{note_id}', summary: 'read a note (forgets the tenant)', access: 'viewer',
      params: z.object({ note_id: z.uuid() }), response: z.object({ id: z.string(), text: z.string() }), errors: [404],
      handler: async ({ params, services }) => {
        const row = await services.db('leaky_notes').where({ id: params.note_id }).first();
        if (!row) throw new (require('../../../core/errors').NotFound)('note not found');
        return { id: row.id, text: row.text };
      },
    }),
  ],
});

describe('tenant isolation attack simulation (every route of the running host)', function () {
  this.timeout(120_000);
  let t: TestHost;
  let report: any;
  let simulationId: string;
  before(async () => {
    // Every plugin of this build, plus the leaky one.
    const all = discoverPlugins(path.resolve(__dirname, '..', '..', '..', 'plugins'));
    t = await startHost({ plugins: [...all, leaky], config: { webhooks: { schedulerSecret: 'isolation-test-secret-1' } } });
  });
  after(() => t.stop());

  it('runs as a 202 long operation and finishes', async () => {
    const r = await t.request('POST', '/stability/tenant_isolation/attack_simulation', { body: {} });
    expect(r.status).to.equal(202);
    expect(r.body).to.include({ kind: 'attack_simulation', state: 'queued' });
    simulationId = r.body.id;
    const done = await eventually(async () => {
      const x = await t.request('GET', `/stability/tenant_isolation_test?simulation_id=${simulationId}`);
      return ['succeeded', 'failed'].includes(x.body.simulations?.[0]?.state) ? x.body.simulations[0] : null;
    }, 110_000);
    expect(done.state, done.error).to.equal('succeeded');
    report = done.result;
    expect(report.routes_tried).to.be.greaterThan(100);
    expect(report.victim_objects).to.be.greaterThan(3);
    for (const k of ['bola', 'bola_list', 'bfla', 'forged_token', 'id_guess']) expect(report.attempts_by_kind[k], k).to.be.greaterThan(0);
    // the scratch tenants and their users are gone afterwards
    expect(report.tenants.removed_afterwards).to.equal(true);
    expect(await t.host.services.db('tenants').whereIn('id', [report.tenants.victim, report.tenants.attacker])).to.deep.equal([]);
    expect(await t.host.services.db('users').whereIn('tenant_id', [report.tenants.victim, report.tenants.attacker])).to.deep.equal([]);
  });

  it('finds the leak of the leaky plugin, as a critical finding', async () => {
    const leaks = report.attempts.filter((a: any) => a.verdict === 'leak');
    const leakyLeaks = leaks.filter((a: any) => a.path.startsWith('/leaky/'));
    expect(leakyLeaks.length).to.be.at.least(1);
    expect(leakyLeaks[0]).to.include({ kind: 'bola', method: 'GET', status: 200 });
    expect(report.passed).to.equal(false);
    const findings = await t.host.services.db('stability_findings').where({ run_id: simulationId, severity: 'critical' });
    expect(findings.map((f: any) => f.title).join('\n')).to.contain('/leaky/notes/');
    // fed to the security plugin: its rule raises one critical platform finding per leaking route
    const sec = await t.request('GET', '/security/findings?rule_id=stability-isolation-leak');
    expect(sec.status).to.equal(200);
    const leakyRoutes = new Set(leakyLeaks.map((a: any) => `${a.method} ${a.path}`));
    expect(sec.body.findings.map((f: any) => f.subject).sort()).to.deep.equal([...leakyRoutes].sort());
    expect(sec.body.findings[0]).to.include({ severity: 'critical', tenant_id: null, state: 'open' });
  });

  it('finds no leak and no server error on our own API', async () => {
    const ours = report.attempts.filter((a: any) => !a.path.startsWith('/leaky/') && a.verdict !== 'refused' && a.verdict !== 'answers_any_id');
    expect(ours, JSON.stringify(ours.slice(0, 5), null, 1)).to.deep.equal([]);
  });

  it('lists simulations, answers 403 below admin, 401 without token and 404 for an unknown one', async () => {
    const list = await t.request('GET', '/stability/tenant_isolation_test');
    expect(list.status).to.equal(200);
    expect(list.body.simulations[0].id).to.equal(simulationId);
    expect(list.body.simulations[0].result.attempts).to.equal(undefined);
    const op = (await t.userToken('operator')).token;
    expect((await t.request('POST', '/stability/tenant_isolation/attack_simulation', { token: op, body: {} })).status).to.equal(403);
    expect((await t.request('POST', '/stability/tenant_isolation/attack_simulation', { token: null, body: {} })).status).to.equal(401);
    expect((await t.request('POST', '/stability/tenant_isolation/attack_simulation', { body: { x: 1 } })).status).to.equal(422);
    expect((await t.request('GET', '/stability/tenant_isolation_test', { token: (await t.userToken('viewer')).token })).status).to.equal(403);
    expect((await t.request('GET', `/stability/tenant_isolation_test?simulation_id=${crypto.randomUUID()}`)).status).to.equal(404);
    expect((await t.request('GET', `/stability/tenant_isolation_test?simulation_id=${simulationId}`, { token: (await t.userToken('operator', 'acme')).token })).status).to.equal(404);
  });
});
