import crypto from 'node:crypto';
import { expect } from 'chai';
import { eventually } from '../../helpers/eventually';
import { startHost, type TestHost } from '../../helpers/host';

describe('automation: customers, onboarding flows and proof of value', function () {
  this.timeout(30_000);
  let h: TestHost;
  let operator: string;

  before(async () => {
    h = await startHost({ config: { mesh: { only: ['analytics', 'trading'] } } });
    operator = (await h.userToken('operator')).token;
  });
  after(() => h?.stop());

  const body = (email: string) => ({
    name: 'Acme Analytics',
    tenant_id: `acme-${crypto.randomBytes(3).toString('hex')}`,
    plan: 'pro',
    admin_email: email,
    kernel_quotas: { analytics: { max_concurrent: 2, tasks_per_minute: 60 } },
    starter_workflows: [{ name: 'Describe', steps: [{ id: 'd', kernel: 'analytics', task: 'describe', input: { values: [1, 2, 3] } }] }],
    first_task: { kernel: 'analytics', task: 'describe', input: { values: [4, 5, 6] } },
  });

  let customer: { id: string; customer_tenant: string };

  it('onboards a customer: tenant, invited user, key step, quotas, starter workflow, first task', async () => {
    expect((await h.request('POST', '/automation/customers/onboard', { body: body('a@acme.test'), token: operator })).status).to.equal(403);
    expect((await h.request('POST', '/automation/customers/onboard', { body: body('a@acme.test'), token: null })).status).to.equal(401);
    expect((await h.request('POST', '/automation/customers/onboard', { body: { ...body('a@acme.test'), plan: 'gold' } })).status).to.equal(422);
    expect((await h.request('POST', '/automation/customers/onboard', { body: { ...body('a@acme.test'), kernel_quotas: { nope: { max_concurrent: 1, tasks_per_minute: 1 } } } })).status).to.equal(422);
    expect((await h.request('POST', '/automation/customers/onboard', { body: { ...body('a@acme.test'), first_task: { kernel: 'analytics', task: 'describe', input: {} } } })).status).to.equal(422);
    const r = await h.request('POST', '/automation/customers/onboard', { body: body('a@acme.test') });
    expect(r.status, r.text).to.equal(201);
    expect(r.body.state).to.equal('onboarded');
    const steps = Object.fromEntries(r.body.steps.map((s: { name: string; state: string }) => [s.name, s.state]));
    expect(steps).to.deep.equal({ tenant: 'succeeded', admin_user: 'succeeded', api_key: 'succeeded', kernel_quotas: 'succeeded', starter_workflows: 'succeeded', first_task: 'succeeded' });
    customer = r.body;
    const t = await h.host.services.db('tenants').where({ id: r.body.customer_tenant }).first();
    expect(t.plan).to.equal('pro');
    const mail = await h.host.services.db('mail_outbox').where({ to_address: 'a@acme.test' }).first();
    expect(mail.body).to.contain('Reset token');
    const user = await h.host.services.db('users').where({ email: 'a@acme.test' }).first();
    expect(user.role).to.equal('operator');
    // A retry with the same Idempotency-Key answers the first result.
    const b2 = body('b@acme.test');
    const k1 = await h.request('POST', '/automation/customers/onboard', { body: b2, headers: { 'idempotency-key': 'onboard-1' } });
    const k2 = await h.request('POST', '/automation/customers/onboard', { body: b2, headers: { 'idempotency-key': 'onboard-1' } });
    expect(k1.status).to.equal(201);
    expect(k2.status).to.equal(201);
    expect(k2.body.id).to.equal(k1.body.id);
    // Without one, nothing is made twice: a taken tenant id or e-mail is refused before any step.
    const again = await h.request('POST', '/automation/customers/onboard', { body: { ...body('a@acme.test') } });
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('EMAIL_TAKEN');
  });

  it("hands the onboarding's API key to its tenant once, sealed until then", async () => {
    const step = (customer as unknown as { steps: Array<{ name: string; detail: { key_id: string; reveal: string } }> }).steps.find((x) => x.name === 'api_key')!;
    expect(step.detail.reveal).to.equal(`/automation/keys/${step.detail.key_id}/reveal`);
    // Stored sealed: the secret is nowhere in the database in the clear, nor in the record.
    const kept = await h.host.services.db('automation_key_reveals').where({ key_id: step.detail.key_id }).first();
    expect(kept.sealed).to.match(/^v1\./);
    const user = await h.host.services.db('users').where({ email: 'a@acme.test' }).first();
    const own = h.host.services.auth.sign({ id: user.id, tenantId: customer.customer_tenant, role: 'operator', email: user.email }).token;
    const viewer = h.host.services.auth.sign({ id: user.id, tenantId: customer.customer_tenant, role: 'viewer', email: user.email }).token;
    expect((await h.request('POST', step.detail.reveal, { token: null })).status).to.equal(401);
    expect((await h.request('POST', step.detail.reveal, { token: viewer })).status).to.equal(403);
    // An operator of another tenant is told nothing.
    const other = await h.request('POST', step.detail.reveal, { token: operator });
    expect(other.status).to.equal(404);
    expect((await h.request('POST', '/automation/keys/not-a-uuid/reveal', { token: own })).status).to.equal(422);
    const r = await h.request('POST', step.detail.reveal, { token: own });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ key_id: step.detail.key_id, tenant_id: customer.customer_tenant });
    // The real key: its hash is the one the billing plugin keeps, and it is active.
    const row = await h.host.services.db('api_keys').where({ id: step.detail.key_id }).first();
    expect(crypto.createHash('sha256').update(r.body.key).digest('hex')).to.equal(row.key_hash);
    expect(JSON.parse(row.scopes)).to.deep.equal(['execute', 'read']);
    const again = await h.request('POST', step.detail.reveal, { token: own });
    expect(again.status).to.equal(410);
    expect(again.body.code).to.equal('KEY_ALREADY_REVEALED');
    expect((await h.host.services.db('automation_key_reveals').where({ key_id: step.detail.key_id }).first()).sealed).to.equal(null);
  });

  it("enforces the kernel quotas on the tenant's tasks", async () => {
    const r = await h.request('POST', '/automation/customers/onboard', {
      body: { ...body('quota@acme.test'), kernel_quotas: { analytics: { max_concurrent: 1, tasks_per_minute: 3 } }, starter_workflows: [], first_task: undefined },
    });
    expect(r.status, r.text).to.equal(201);
    const user = await h.host.services.db('users').where({ email: 'quota@acme.test' }).first();
    const caller = { kind: 'user' as const, id: user.id, tenantId: r.body.customer_tenant, role: 'operator' as const };
    // Two at once: the second is refused while the first is in flight.
    const both = await Promise.allSettled([1, 2].map(() => h.host.services.mesh.run('analytics', 'describe', { values: [1] }, { caller })));
    expect(both[0]!.status).to.equal('fulfilled');
    expect(both[1]!.status).to.equal('rejected');
    expect(((both[1] as PromiseRejectedResult).reason as { code: string }).code).to.equal('QUOTA_EXCEEDED');
    // Three a minute, through the API: the fourth is refused with Retry-After.
    const token = h.host.services.auth.sign({ id: user.id, tenantId: caller.tenantId, role: 'operator', email: user.email }).token;
    const run = () => h.request('POST', '/kernels/analytics/tasks/describe', { body: { values: [1, 2] }, token });
    expect((await run()).status).to.equal(200);
    expect((await run()).status).to.equal(200);
    const over = await run();
    expect(over.status).to.equal(429);
    expect(over.body.code).to.equal('QUOTA_EXCEEDED');
    expect(Number(over.headers.get('retry-after'))).to.be.within(1, 60);
    // Another tenant without a quota is not limited.
    expect((await h.request('POST', '/kernels/analytics/tasks/describe', { body: { values: [1] }, token: operator })).status).to.equal(200);
  });

  it('shows and validates every step again against the live state', async () => {
    const s = await h.request('GET', `/automation/customers/${customer.id}/status`);
    expect(s.status).to.equal(200);
    expect(s.body.steps).to.have.length(6);
    expect((await h.request('GET', `/automation/customers/${customer.id}/status`, { token: operator })).status).to.equal(403);
    expect((await h.request('GET', `/automation/customers/${crypto.randomUUID()}/status`)).status).to.equal(404);
    expect((await h.request('GET', '/automation/customers/nope/status')).status).to.equal(422);
    // Task outcomes are written in batches: the first task shows up within a flush.
    const v = await eventually(async () => {
      const r = await h.request('POST', `/automation/customers/${customer.id}/validate`);
      expect(r.status).to.equal(200);
      return r.body.valid ? r : null;
    });
    expect(v.body.checks).to.have.length(6);
    // A quota removed behind its back shows up.
    await h.host.services.db('automation_quotas').where({ customer_tenant: customer.customer_tenant }).delete();
    const v2 = await h.request('POST', `/automation/customers/${customer.id}/validate`);
    expect(v2.body.valid).to.equal(false);
    expect(v2.body.checks.find((c: { step: string }) => c.step === 'kernel_quotas').ok).to.equal(false);
    expect((await h.request('POST', `/automation/customers/${customer.id}/validate`, { token: operator })).status).to.equal(403);
  });

  it('offboards: refused while work runs, export first, then every row deleted and sessions closed', async () => {
    const user = await h.host.services.db('users').where({ email: 'a@acme.test' }).first();
    const token = h.host.services.auth.sign({ id: user.id, tenantId: customer.customer_tenant, role: 'operator', email: user.email }).token;
    expect((await h.request('GET', '/tenant/current', { token })).status).to.equal(200);
    // Revocations cut at whole seconds (core/auth): the token must be older than the offboarding.
    await new Promise((r) => setTimeout(r, 1100));
    // Running work blocks it.
    await h.host.services.db('automation_deployments').insert({ id: crypto.randomUUID(), tenant_id: customer.customer_tenant, kernel_id: 'analytics', state: 'running', target: '{}', steps: '[]', created_by: user.id, created_at: new Date().toISOString(), updated_at: new Date().toISOString() });
    const busy = await h.request('DELETE', `/automation/customers/${customer.id}`);
    expect(busy.status).to.equal(409);
    expect(busy.body.code).to.equal('RUNNING_WORK');
    await h.host.services.db('automation_deployments').where({ tenant_id: customer.customer_tenant }).update({ state: 'succeeded' });
    const dry = await h.request('DELETE', `/automation/customers/${customer.id}?dry_run=true`);
    expect(dry.status).to.equal(200);
    expect(dry.body.export.counts.users).to.equal(1);
    expect(dry.body.export.counts.workflow_definitions).to.equal(1);
    expect(dry.body.deleted).to.deep.equal({});
    expect((await h.request('DELETE', `/automation/customers/${customer.id}`, { token: operator })).status).to.equal(403);
    expect((await h.request('DELETE', `/automation/customers/${customer.id}?dry_run=maybe`)).status).to.equal(422);
    const gone = await h.request('DELETE', `/automation/customers/${customer.id}`);
    expect(gone.status).to.equal(200);
    expect(gone.body.state).to.equal('offboarded');
    expect(gone.body.deleted.users).to.equal(1);
    expect(gone.body.deleted.tenants).to.equal(1);
    expect(gone.body.export.tables.users[0].email).to.equal('a@acme.test');
    for (const t of ['users', 'workflow_definitions', 'task_outcomes', 'mail_outbox', 'automation_deployments']) {
      expect(await h.host.services.db(t).where({ tenant_id: customer.customer_tenant }).first(), t).to.equal(undefined);
    }
    expect((await h.request('GET', '/tenant/current', { token })).status).to.equal(401);
    const twice = await h.request('DELETE', `/automation/customers/${customer.id}`);
    expect(twice.status).to.equal(409);
    expect(twice.body.code).to.equal('INVALID_STATE');
  });

  it('serves onboarding templates as data', async () => {
    const t = await h.request('GET', '/onboarding/templates/trading_desk', { token: (await h.userToken('viewer')).token });
    expect(t.status).to.equal(200);
    expect(t.body.steps).to.deep.equal(['tenant', 'admin_user', 'api_key', 'kernel_quotas', 'starter_workflows', 'first_task']);
    expect(t.body.first_task.kernel).to.equal('trading');
    expect((await h.request('GET', '/onboarding/templates/bakery')).status).to.equal(404);
    expect((await h.request('GET', '/onboarding/templates/trading_desk', { token: null })).status).to.equal(401);
  });

  it('creates and executes an onboarding flow in the background', async () => {
    expect((await h.request('POST', '/onboarding/create', { body: { customer_type: 'bakery', name: 'X', admin_email: 'x@x.test' } })).status).to.equal(422);
    expect((await h.request('POST', '/onboarding/create', { body: { customer_type: 'trading_desk', name: 'X', admin_email: 'x@x.test' }, token: operator })).status).to.equal(403);
    const c = await h.request('POST', '/onboarding/create', { body: { customer_type: 'trading_desk', name: 'Desk One', admin_email: 'desk@one.test' } });
    expect(c.status).to.equal(201);
    expect(c.body.state).to.equal('created');
    expect(c.body.steps.every((s: { state: string }) => s.state === 'pending')).to.equal(true);
    expect((await h.request('POST', `/onboarding/${c.body.id}/execute`, { token: operator })).status).to.equal(403);
    const x = await h.request('POST', `/onboarding/${c.body.id}/execute`);
    expect(x.status).to.equal(202);
    expect(x.body.state).to.equal('queued');
    const done = await eventually(async () => {
      const r = await h.request('GET', `/onboarding/${c.body.id}`);
      return ['succeeded', 'failed'].includes(r.body.state) ? r.body : null;
    }, 15_000);
    expect(done.state, JSON.stringify(done.steps)).to.equal('succeeded');
    const first = done.steps.find((s: { name: string }) => s.name === 'first_task');
    expect(first.detail.output.price).to.be.greaterThan(0);
    const again = await h.request('POST', `/onboarding/${c.body.id}/execute`);
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('INVALID_STATE');
    expect((await h.request('GET', `/onboarding/${crypto.randomUUID()}`)).status).to.equal(404);
    expect((await h.request('GET', `/onboarding/${c.body.id}`, { token: null })).status).to.equal(401);
  });

  it('generates, deploys and measures a proof-of-value environment', async () => {
    const bad = await h.request('POST', '/pov/generate', { body: { customer_type: 'analytics_team', name: 'Trial', admin_email: 'pov@trial.test', criteria: [] } });
    expect(bad.status).to.equal(422);
    expect((await h.request('POST', '/pov/generate', { body: { customer_type: 'analytics_team', name: 'Trial', admin_email: 'pov@trial.test', criteria: [{ metric: 'successful_tasks', target: 1 }] }, token: operator })).status).to.equal(403);
    const g = await h.request('POST', '/pov/generate', {
      body: { customer_type: 'analytics_team', name: 'Trial', admin_email: 'pov@trial.test', duration_days: 7, criteria: [{ metric: 'successful_tasks', target: 2 }, { metric: 'success_ratio', target: 0.9 }, { metric: 'p95_latency_ms', target: 60_000, kernel: 'analytics' }] },
    });
    expect(g.status).to.equal(201);
    expect(g.body.customer_tenant).to.match(/^pov-/);
    const before = await h.request('GET', `/pov/${g.body.id}`);
    expect(before.body.progress.criteria.map((c: { measured: number | null }) => c.measured)).to.deep.equal([0, null, null]);
    expect(before.body.progress.met).to.equal(false);
    expect((await h.request('POST', `/pov/${g.body.id}/deploy`, { token: operator })).status).to.equal(403);
    expect((await h.request('POST', `/pov/${g.body.id}/deploy`)).status).to.equal(202);
    await eventually(async () => (await h.request('GET', `/pov/${g.body.id}`)).body.state === 'succeeded', 15_000);
    // The tenant does its own work: one more task, run as its user.
    const user = await h.host.services.db('users').where({ email: 'pov@trial.test' }).first();
    await h.host.services.mesh.run('analytics', 'describe', { values: [1, 2] }, { caller: { kind: 'user', id: user.id, tenantId: g.body.customer_tenant, role: 'operator' } });
    const p = await eventually(async () => {
      const r = await h.request('GET', `/pov/${g.body.id}`);
      return r.body.progress.criteria[0].measured >= 2 ? r.body : null;
    }, 10_000);
    expect(p.progress.criteria.map((c: { met: boolean }) => c.met)).to.deep.equal([true, true, true]);
    expect(p.progress.met).to.equal(true);
    expect(p.progress.method).to.contain('percentiles');
    expect((await h.request('POST', `/pov/${g.body.id}/deploy`)).status).to.equal(409);
    expect((await h.request('GET', `/pov/${crypto.randomUUID()}`)).status).to.equal(404);
    expect((await h.request('GET', `/pov/${g.body.id}`, { token: null })).status).to.equal(401);
  });
});
