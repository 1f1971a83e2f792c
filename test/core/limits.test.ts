import crypto from 'node:crypto';
import { expect } from 'chai';
import authPlugin from '../../plugins/auth';
import tenantsPlugin from '../../plugins/tenants';
import usagePlugin from '../../plugins/usage';
import { ConfigError, loadConfig } from '../../core/config';
import { REDIS_URL, startHost, type Reply, type TestHost } from '../helpers/host';

// Real budgets: the plans' defaults (free 10, pro 100, enterprise 1000 a minute).
const REAL = { plans: { enterprise: { requestsPerMinute: 1000 } }, limits: { clientAddressPerWindow: 5 } };

function expectHeaders(r: Reply, limit: number, remaining: number, policy: string): void {
  expect(r.headers.get('x-ratelimit-limit')).to.equal(String(limit));
  expect(r.headers.get('x-ratelimit-remaining')).to.equal(String(remaining));
  const reset = Number(r.headers.get('x-ratelimit-reset'));
  const now = Date.now() / 1000;
  expect(reset).to.be.within(Math.floor(now), Math.ceil(now) + 60);
  expect(r.headers.get('ratelimit-policy')).to.equal(`"${policy}";q=${limit};w=60`);
  expect(r.headers.get('ratelimit')).to.match(new RegExp(`^"${policy}";r=${remaining};t=\\d+$`));
}

describe('plans in config', () => {
  it('keeps free, pro and enterprise, lets config change them and add plans', () => {
    const c = loadConfig({}, { plans: { free: { requestsPerMinute: 20 }, bench: { requestsPerMinute: 5, features: ['api'] } } });
    expect(c.plans.free.requestsPerMinute).to.equal(20);
    expect(c.plans.free.features).to.include('api');
    expect(c.plans.pro.requestsPerMinute).to.equal(100);
    expect(c.plans.enterprise.requestsPerMinute).to.equal(1000);
    expect(c.plans.bench).to.deep.equal({ requestsPerMinute: 5, features: ['api'] });
    expect(() => loadConfig({}, { plans: { 'Bad Name': { requestsPerMinute: 1 } } })).to.throw(ConfigError);
    expect(() => loadConfig({}, { plans: { gold: { requestsPerMinute: 0 } } })).to.throw(ConfigError, /plans\.gold\.requestsPerMinute/);
  });
});

describe('rate limits (local store)', () => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ plugins: [authPlugin, tenantsPlugin, usagePlugin], config: REAL });
  });
  after(() => t.stop());

  it('free: 10 a minute, then 429 at once with Retry-After and every header', async () => {
    const u = await t.userToken('viewer', 'free-co', 'free');
    for (let i = 1; i <= 10; i++) {
      const r = await t.request('GET', '/tenant/current', { token: u.token });
      expect(r.status).to.equal(200);
      expectHeaders(r, 10, 10 - i, 'free');
    }
    const over = await t.request('GET', '/tenant/current', { token: u.token });
    expect(over.status).to.equal(429);
    expectHeaders(over, 10, 0, 'free');
    const retry = Number(over.headers.get('retry-after'));
    expect(retry).to.be.within(1, 60);
    expect(Number(over.headers.get('x-ratelimit-reset'))).to.be.closeTo(Date.now() / 1000 + retry, 2);
    expect(over.body.detail).to.match(/Rate limit exceeded: 10 requests per 60 s/);
    // The budget is the tenant's: another user of the same tenant is refused too.
    const colleague = await t.userToken('member', 'free-co', 'free');
    expect((await t.request('GET', '/tenant/current', { token: colleague.token })).status).to.equal(429);
    // Another tenant is not affected.
    const other = await t.userToken('viewer', 'other-co', 'free');
    expect((await t.request('GET', '/tenant/current', { token: other.token })).status).to.equal(200);
  });

  it('pro: 100 a minute; enterprise: 1000', async () => {
    const u = await t.userToken('viewer', 'pro-co', 'pro');
    const all = await Promise.all(Array.from({ length: 101 }, () => t.request('GET', '/tenant/current', { token: u.token })));
    expect(all.filter((r) => r.status === 200)).to.have.length(100);
    expect(all.filter((r) => r.status === 429)).to.have.length(1);
    const e = await t.userToken('viewer', 'big-co', 'enterprise');
    const r = await t.request('GET', '/tenant/current', { token: e.token });
    expectHeaders(r, 1000, 999, 'enterprise');
  });

  it('a plan change takes effect at once', async () => {
    const u = await t.userToken('viewer', 'upgrade-co', 'free');
    for (let i = 0; i < 10; i++) await t.request('GET', '/tenant/current', { token: u.token });
    expect((await t.request('GET', '/tenant/current', { token: u.token })).status).to.equal(429);
    const assign = await t.request('POST', '/billing/assign-plan', { body: { tenant_id: 'upgrade-co', plan: 'pro' } });
    expect(assign.status).to.equal(200);
    const after = await t.request('GET', '/tenant/current', { token: u.token });
    expect(after.status).to.equal(200);
    expectHeaders(after, 100, 99, 'pro');
    await t.request('POST', '/billing/assign-plan', { body: { tenant_id: 'upgrade-co', plan: 'free' } });
    expect((await t.request('GET', '/tenant/current', { token: u.token })).headers.get('x-ratelimit-limit')).to.equal('10');
  });

  it('limits unauthenticated auth routes per client address', async () => {
    const from = (ip: string) => t.request('GET', '/auth/verify?token=abc', { token: null, headers: { 'x-forwarded-for': ip } });
    for (let i = 1; i <= 5; i++) {
      const r = await from('192.0.2.7');
      expect(r.status).to.equal(200);
      expectHeaders(r, 5, 5 - i, 'address');
    }
    const over = await from('192.0.2.7');
    expect(over.status).to.equal(429);
    expect(over.headers.get('retry-after')).to.match(/^\d+$/);
    expect((await t.request('POST', '/auth/login', { token: null, body: { email: 'x@y.z', password: 'p' }, headers: { 'x-forwarded-for': '192.0.2.7' } })).status).to.equal(429);
    expect((await from('192.0.2.8')).status).to.equal(200);
  });

  it('starts a full budget when the window ends', async () => {
    const short = await startHost({ plugins: [tenantsPlugin, usagePlugin], config: { ...REAL, limits: { windowSeconds: 1 } } });
    try {
      const u = await short.userToken('viewer', 'tick-co', 'free');
      for (let i = 0; i < 10; i++) await short.request('GET', '/tenant/current', { token: u.token });
      const over = await short.request('GET', '/tenant/current', { token: u.token });
      expect(over.status).to.equal(429);
      const wait = Number(over.headers.get('x-ratelimit-reset')) * 1000 - Date.now();
      expect(wait).to.be.at.most(2000);
      await new Promise((r) => setTimeout(r, Math.max(0, wait) + 300));
      const again = await short.request('GET', '/tenant/current', { token: u.token });
      expect(again.status).to.equal(200);
      expect(again.headers.get('x-ratelimit-remaining')).to.equal('9');
    } finally {
      await short.stop();
    }
  });
});

describe('rate limits shared through Redis', () => {
  it("two hosts share one tenant's budget", async () => {
    const config = { ...REAL, redis: { url: REDIS_URL }, limits: { redisPrefix: `pc-test-shared-${crypto.randomBytes(6).toString('hex')}` } };
    const a = await startHost({ plugins: [tenantsPlugin, usagePlugin], config });
    const b = await startHost({ plugins: [tenantsPlugin, usagePlugin], config });
    try {
      expect(a.host.services.limits.shared).to.equal(true);
      const ua = await a.userToken('viewer', 'shared-co', 'free');
      const ub = await b.userToken('viewer', 'shared-co', 'free');
      for (let i = 1; i <= 6; i++) {
        const r = await a.request('GET', '/tenant/current', { token: ua.token });
        expect(r.status).to.equal(200);
        expectHeaders(r, 10, 10 - i, 'free');
      }
      for (let i = 7; i <= 10; i++) {
        const r = await b.request('GET', '/tenant/current', { token: ub.token });
        expect(r.status).to.equal(200);
        expectHeaders(r, 10, 10 - i, 'free');
      }
      const overB = await b.request('GET', '/tenant/current', { token: ub.token });
      const overA = await a.request('GET', '/tenant/current', { token: ua.token });
      expect(overB.status).to.equal(429);
      expect(overA.status).to.equal(429);
      // Both hosts agree on when the window ends.
      expect(Math.abs(Number(overA.headers.get('x-ratelimit-reset')) - Number(overB.headers.get('x-ratelimit-reset')))).to.be.at.most(1);
      // Another tenant on the same hosts keeps its own budget.
      const other = await b.userToken('viewer', 'solo-co', 'free');
      expect((await b.request('GET', '/tenant/current', { token: other.token })).status).to.equal(200);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it("falls back to this host's budgets when Redis is unreachable", async () => {
    const t = await startHost({ plugins: [authPlugin, tenantsPlugin, usagePlugin], config: { ...REAL, redis: { url: 'redis://127.0.0.1:1' } } });
    try {
      const u = await t.userToken('viewer', 'lonely-co', 'free');
      const r = await t.request('GET', '/tenant/current', { token: u.token });
      expect(r.status).to.equal(200);
      expectHeaders(r, 10, 9, 'free');
      for (let i = 0; i < 9; i++) await t.request('GET', '/tenant/current', { token: u.token });
      expect((await t.request('GET', '/tenant/current', { token: u.token })).status).to.equal(429);
      // Login throttling keeps its counts in Redis too; without it, logins still answer.
      const login = await t.request('POST', '/auth/login', { token: null, body: { email: t.admin.email, password: t.admin.password } });
      expect(login.status).to.equal(200);
      const wrong = await t.request('POST', '/auth/login', { token: null, body: { email: t.admin.email, password: 'wrong-password-1' } });
      expect(wrong.status).to.equal(401);
    } finally {
      await t.stop();
    }
  });
});
