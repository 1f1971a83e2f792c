import crypto from 'node:crypto';
import { expect } from 'chai';
import { dropSchema, REDIS_URL, startHost, type TestHost } from '../../helpers/host';
import { billingPlugins } from '../billing/plugins';

// An API key's own budget is one budget for every host (core's limits, Redis).
describe('billing: an API key budget shared by two hosts', function () {
  this.timeout(60_000);
  const pgSchema = `t_${crypto.randomBytes(6).toString('hex')}`;
  const config = { redis: { url: REDIS_URL }, limits: { redisPrefix: `pc-test-keys-${crypto.randomBytes(6).toString('hex')}` } };
  let a: TestHost;
  let b: TestHost;
  before(async () => {
    a = await startHost({ db: 'postgres', pgSchema, plugins: billingPlugins, config });
    b = await startHost({ db: 'postgres', pgSchema, plugins: billingPlugins, config });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await dropSchema(pgSchema);
  });

  it('counts the requests of both hosts against the key, and refuses on either past it', async () => {
    const member = await a.userToken('member', 'keyed-co', 'enterprise');
    const k = await a.request('POST', '/monetization/api-keys', { token: member.token, body: { name: 'shared', scopes: ['read'], rate_limit_per_minute: 3 } });
    expect(k.status).to.equal(201);
    const hosts = [a, b, a];
    for (const [i, h] of hosts.entries()) {
      const r = await h.request('GET', '/tenant/current', { token: k.body.key });
      expect(r.status, `request ${i + 1}`).to.equal(200);
      expect(r.headers.get('x-key-ratelimit-limit')).to.equal('3');
      expect(r.headers.get('x-key-ratelimit-remaining')).to.equal(String(2 - i));
    }
    const overB = await b.request('GET', '/tenant/current', { token: k.body.key });
    expect(overB.status).to.equal(429);
    expect(Number(overB.headers.get('retry-after'))).to.be.greaterThan(0);
    expect((await a.request('GET', '/tenant/current', { token: k.body.key })).status).to.equal(429);
    // The tenant's own budget is not spent by the key's refusals alone: a user still gets in.
    const onB = await b.userToken('viewer', 'keyed-co', 'enterprise');
    expect((await b.request('GET', '/tenant/current', { token: onB.token })).status).to.equal(200);
  });
});
