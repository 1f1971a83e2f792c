import crypto from 'node:crypto';
import { expect } from 'chai';
import authPlugin from '../../../plugins/auth';
import automation from '../../../plugins/automation';
import kernels from '../../../plugins/kernels';
import { dropSchema, REDIS_URL, startHost, type TestHost } from '../../helpers/host';

// Two hosts on one PostgreSQL schema and one Redis: a tenant's per-minute kernel quota is
// one budget for both (core.limits), not one per host.
describe('automation: kernel quotas shared by the hosts of a cluster', function () {
  this.timeout(60_000);
  const schema = `t_${crypto.randomBytes(6).toString('hex')}`;
  const shared = {
    redis: { url: REDIS_URL },
    limits: { redisPrefix: `pc-test-quota-${crypto.randomBytes(6).toString('hex')}` },
    auth: { jwtSecret: crypto.randomBytes(32).toString('hex') },
    mesh: { only: ['analytics'] },
  };
  let a: TestHost;
  let b: TestHost | undefined;
  after(async () => {
    await b?.stop();
    await a?.stop();
    await dropSchema(schema);
  });

  it('refuses the third task of a 2-a-minute quota whichever host runs it; no API key service: not_configured', async () => {
    a = await startHost({ db: 'postgres', pgSchema: schema, plugins: [authPlugin, kernels, automation], config: shared });
    const r = await a.request('POST', '/automation/customers/onboard', {
      body: { name: 'Shared Quota', admin_email: 'shared@quota.test', plan: 'enterprise', kernel_quotas: { analytics: { max_concurrent: 10, tasks_per_minute: 2 } } },
    });
    expect(r.status, r.text).to.equal(201);
    const keyStep = r.body.steps.find((s: { name: string }) => s.name === 'api_key');
    expect(keyStep.state).to.equal('not_configured');
    expect(keyStep.detail.code).to.equal('NOT_CONFIGURED');
    // The second host reads the quota rows as it starts.
    b = await startHost({ db: 'postgres', pgSchema: schema, plugins: [authPlugin, kernels, automation], config: shared });
    const user = await a.host.services.db('users').where({ email: 'shared@quota.test' }).first();
    const token = a.host.services.auth.sign({ id: user.id, tenantId: r.body.customer_tenant, role: 'operator', email: user.email }).token;
    const run = (h: TestHost) => h.request('POST', '/kernels/analytics/tasks/describe', { body: { values: [1, 2] }, token });
    expect((await run(a)).status).to.equal(200);
    expect((await run(b)).status).to.equal(200);
    for (const h of [a, b]) {
      const over = await run(h);
      expect(over.status).to.equal(429);
      expect(over.body.code).to.equal('QUOTA_EXCEEDED');
    }
  });
});
