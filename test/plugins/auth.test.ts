import crypto from 'node:crypto';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { WebSocket } from 'ws';
import { accountsRef } from '../../core/contracts/accounts';
import { definePlugin } from '../../core/plugin';
import authPlugin from '../../plugins/auth';
import tenantsPlugin from '../../plugins/tenants';
import usagePlugin from '../../plugins/usage';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';
import { startSmtp } from '../helpers/smtp';

const PASSWORD = 'correct-horse-7';
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

eachDatabase('auth plugin', (db) => {
  let t: TestHost;
  let n = 0;
  const newEmail = () => `user${++n}-${crypto.randomBytes(3).toString('hex')}@example.org`;
  async function registerAndLogin(email = newEmail(), password = PASSWORD) {
    const reg = await t.request('POST', '/auth/register', { token: null, body: { email, password, name: 'Ada' } });
    expect(reg.status, reg.text).to.equal(201);
    const login = await t.request('POST', '/auth/login', { token: null, body: { email, password } });
    expect(login.status, login.text).to.equal(200);
    return { email, user: reg.body, ...login.body };
  }

  before(async () => {
    t = await startHost({ db, plugins: [authPlugin, tenantsPlugin, usagePlugin] });
  });
  after(() => t.stop());

  describe('POST /auth/users (admin)', () => {
    it('creates an operator in an existing tenant, who can then log in with that role', async () => {
      const email = newEmail();
      const r = await t.request('POST', '/auth/users', { body: { email, password: PASSWORD, name: 'Op', role: 'operator', tenant_id: 'platform' } });
      expect(r.status, r.text).to.equal(201);
      expect(r.body).to.include({ email, role: 'operator', tenant_id: 'platform' });
      const login = await t.request('POST', '/auth/login', { token: null, body: { email, password: PASSWORD } });
      expect(login.body.user.role).to.equal('operator');
      const logged = await t.host.services.actions.list({ limit: 1, action: 'create_user' });
      expect(logged.actions[0]).to.include({ target_id: r.body.id, result: 'succeeded' });
    });

    it('is for admins only, and refuses bad input, unknown tenants and taken e-mails', async () => {
      const body = { email: newEmail(), password: PASSWORD, name: 'X', role: 'viewer', tenant_id: 'platform' };
      expect((await t.request('POST', '/auth/users', { token: null, body })).status).to.equal(401);
      const op = await t.userToken('operator');
      expect((await t.request('POST', '/auth/users', { token: op.token, body })).status).to.equal(403);
      expect((await t.request('POST', '/auth/users', { body: { ...body, role: 'overlord' } })).status).to.equal(422);
      expect((await t.request('POST', '/auth/users', { body: { ...body, password: 'short' } })).status).to.equal(422);
      expect((await t.request('POST', '/auth/users', { body: { ...body, tenant_id: 'no-such-tenant' } })).status).to.equal(404);
      expect((await t.request('POST', '/auth/users', { body: { ...body, email: t.admin.email } })).status).to.equal(409);
      expect(await t.host.services.db('users').where({ email: body.email }).first()).to.equal(undefined);
    });
  });

  describe('POST /auth/register', () => {
    it('creates a member of a new free tenant and never returns the hash', async () => {
      const email = newEmail();
      const r = await t.request('POST', '/auth/register', { token: null, body: { email: email.toUpperCase(), password: PASSWORD, name: 'Ada' } });
      expect(r.status).to.equal(201);
      expect(r.body).to.include({ email, name: 'Ada', role: 'member' });
      expect(r.body.id).to.match(/^[0-9a-f-]{36}$/);
      expect(r.text).not.to.match(/argon2|password/);
      const tenant = await t.host.services.db('tenants').where({ id: r.body.tenant_id }).first();
      expect(tenant.plan).to.equal('free');
      expect(r.body.tenant_id).not.to.equal('platform');
    });

    it('answers 409 for a taken e-mail (any case)', async () => {
      const email = newEmail();
      await t.request('POST', '/auth/register', { token: null, body: { email, password: PASSWORD, name: 'A' } });
      const again = await t.request('POST', '/auth/register', { token: null, body: { email: email.toUpperCase(), password: PASSWORD, name: 'B' } });
      expect(again.status).to.equal(409);
    });

    it('answers 422 for a bad e-mail, a weak password or a missing name', async () => {
      const bad = await t.request('POST', '/auth/register', { token: null, body: { email: 'not-an-email', password: 'short', name: '' } });
      expect(bad.status).to.equal(422);
      const locs = bad.body.detail.map((d: { loc: string[] }) => d.loc.join('.'));
      expect(locs).to.include.members(['body.email', 'body.password', 'body.name']);
      for (const pw of ['onlyletterslong', '1234567890123', 'a1']) {
        const r = await t.request('POST', '/auth/register', { token: null, body: { email: newEmail(), password: pw, name: 'x' } });
        expect(r.status, pw).to.equal(422);
      }
    });
  });

  describe('POST /auth/login', () => {
    it('answers token, access_token, bearer type, refresh token and the user', async () => {
      const s = await registerAndLogin();
      expect(s.token).to.equal(s.access_token);
      expect(s.token_type).to.equal('bearer');
      expect(s.expires_in).to.equal(24 * 3600);
      expect(s.refresh_token).to.be.a('string').with.length.above(30);
      expect(s.user).to.include({ email: s.email, name: 'Ada', role: 'member' });
      const claims = jwt.decode(s.token) as Record<string, unknown>;
      expect(claims).to.include({ sub: s.user.id, tenant: s.user.tenant_id, role: 'member', iss: 'platform-control', aud: 'platform-control-api' });
      expect(claims.exp).to.equal((claims.iat as number) + 24 * 3600);
      expect(claims.jti).to.be.a('string');
    });

    it('answers the same 401 for a wrong e-mail and a wrong password', async () => {
      const s = await registerAndLogin();
      const wrongPw = await t.request('POST', '/auth/login', { token: null, body: { email: s.email, password: 'wrong-password-1' } });
      const wrongEmail = await t.request('POST', '/auth/login', { token: null, body: { email: newEmail(), password: 'wrong-password-1' } });
      expect(wrongPw.status).to.equal(401);
      expect(wrongEmail.status).to.equal(401);
      expect(wrongPw.body).to.deep.equal(wrongEmail.body);
    });

    it('answers 422 without e-mail or password', async () => {
      const r = await t.request('POST', '/auth/login', { token: null, body: {} });
      expect(r.status).to.equal(422);
    });
  });

  describe('GET /auth/me and POST /auth/logout', () => {
    it('shows the current user; 401 without a token', async () => {
      const s = await registerAndLogin();
      const me = await t.request('GET', '/auth/me', { token: s.token });
      expect(me.status).to.equal(200);
      expect(me.body).to.include({ id: s.user.id, email: s.email, role: 'member' });
      expect(Date.parse(me.body.token_expires_at)).to.be.above(Date.now());
      expect((await t.request('GET', '/auth/me', { token: null })).status).to.equal(401);
      expect((await t.request('POST', '/auth/logout', { token: null })).status).to.equal(401);
    });

    it('logout revokes the token and its refresh token', async () => {
      const s = await registerAndLogin();
      const out = await t.request('POST', '/auth/logout', { token: s.token });
      expect(out.status).to.equal(200);
      const me = await t.request('GET', '/auth/me', { token: s.token });
      expect(me.status).to.equal(401);
      expect(me.body.detail).to.match(/revoked/);
      expect((await t.request('GET', `/auth/verify?token=${s.token}`, { token: null })).body).to.deep.equal({ valid: false, reason: 'revoked' });
      expect((await t.request('POST', '/auth/refresh', { token: null, body: { refresh_token: s.refresh_token } })).status).to.equal(401);
    });
  });

  describe('GET /auth/verify: the token lifecycle', () => {
    it('accepts a good token and says until when', async () => {
      const s = await registerAndLogin();
      const r = await t.request('GET', `/auth/verify?token=${s.token}`, { token: null });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ valid: true, user_id: s.user.id, tenant_id: s.user.tenant_id, role: 'member' });
      expect(Date.parse(r.body.expires_at)).to.be.closeTo(Date.now() + 24 * 3600 * 1000, 10_000);
    });

    it('refuses expired, tampered, alg none, switched-algorithm and malformed tokens, never with a 500', async () => {
      const s = await registerAndLogin();
      const auth = t.host.services.auth;
      const expired = auth.sign({ id: s.user.id, tenantId: s.user.tenant_id, role: 'member' }, -10).token;
      const [h, p, sig] = s.token.split('.');
      const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
      const tampered = `${h}.${b64({ ...claims, role: 'admin' })}.${sig}`;
      const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims, role: 'admin' })}.`;
      const hs512 = jwt.sign({ ...claims, role: 'admin' }, 'some-other-secret-of-32-characters!!', { algorithm: 'HS512' });
      const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
      const rs256 = jwt.sign({ ...claims, role: 'admin' }, privateKey, { algorithm: 'RS256' });
      const cases: Array<[string, string]> = [
        [expired, 'expired'],
        [tampered, 'bad signature'],
        [none, 'bad signature'],
        [hs512, 'bad signature'],
        [rs256, 'bad signature'],
        ['abc', 'malformed'],
        ['a.b.c', 'malformed'],
      ];
      for (const [token, reason] of cases) {
        const v = await t.request('GET', `/auth/verify?token=${encodeURIComponent(token)}`, { token: null });
        expect(v.status, reason).to.equal(200);
        expect(v.body, reason).to.deep.equal({ valid: false, reason });
        const me = await t.request('GET', '/auth/me', { token });
        expect(me.status, reason).to.equal(401);
      }
    });

    it('answers 422 without a token', async () => {
      expect((await t.request('GET', '/auth/verify', { token: null })).status).to.equal(422);
    });
  });

  describe('POST /auth/refresh', () => {
    it('rotates: a new pair, the old refresh token spent', async () => {
      const s = await registerAndLogin();
      const r = await t.request('POST', '/auth/refresh', { token: null, body: { refresh_token: s.refresh_token } });
      expect(r.status).to.equal(200);
      expect(r.body.refresh_token).not.to.equal(s.refresh_token);
      expect(r.body.token).not.to.equal(s.token);
      expect((await t.request('GET', '/auth/me', { token: r.body.token })).status).to.equal(200);
    });

    it('a reused refresh token revokes its whole family', async () => {
      const s = await registerAndLogin();
      const first = await t.request('POST', '/auth/refresh', { token: null, body: { refresh_token: s.refresh_token } });
      const reuse = await t.request('POST', '/auth/refresh', { token: null, body: { refresh_token: s.refresh_token } });
      expect(reuse.status).to.equal(401);
      expect(reuse.body.detail).to.match(/already used/);
      // The thief's and the owner's newer tokens are dead too.
      expect((await t.request('POST', '/auth/refresh', { token: null, body: { refresh_token: first.body.refresh_token } })).status).to.equal(401);
      expect((await t.request('GET', '/auth/me', { token: first.body.token })).status).to.equal(401);
      expect((await t.request('GET', '/auth/me', { token: s.token })).status).to.equal(401);
    });

    it('answers 401 for an unknown token and 422 without one', async () => {
      expect((await t.request('POST', '/auth/refresh', { token: null, body: { refresh_token: 'nope' } })).status).to.equal(401);
      expect((await t.request('POST', '/auth/refresh', { token: null, body: {} })).status).to.equal(422);
    });
  });

  describe('password reset', () => {
    async function resetToken(email: string): Promise<string> {
      const r = await t.request('POST', '/auth/password-reset/request', { token: null, body: { email } });
      expect(r.status).to.equal(202);
      await t.host.service(accountsRef).settle();
      const mail = await t.host.services.db('mail_outbox').where({ to_address: email }).orderBy('created_at', 'desc').first();
      return /Reset token: (\S+)/.exec(mail.body)![1];
    }

    it('answers the same 202 for known and unknown e-mails, and mails only real accounts', async () => {
      const s = await registerAndLogin();
      const known = await t.request('POST', '/auth/password-reset/request', { token: null, body: { email: s.email } });
      const unknown = await t.request('POST', '/auth/password-reset/request', { token: null, body: { email: 'nobody@example.org' } });
      expect(known.status).to.equal(202);
      expect(unknown.status).to.equal(202);
      expect(known.body).to.deep.equal(unknown.body);
      await t.host.service(accountsRef).settle();
      const mails = await t.host.services.db('mail_outbox').whereIn('to_address', [s.email, 'nobody@example.org']);
      expect(mails.map((m) => m.to_address)).to.deep.equal([s.email]);
      expect(mails[0].status).to.equal('stored');
      const row = await t.host.services.db('password_resets').where({ user_id: s.user.id }).first();
      const token = /Reset token: (\S+)/.exec(mails[0].body)![1];
      expect(row.token_hash).to.equal(crypto.createHash('sha256').update(token).digest('hex'));
      expect(Number(row.expires_at) - Date.now() / 1000).to.be.closeTo(3600, 30);
      expect((await t.request('POST', '/auth/password-reset/request', { token: null, body: { email: 'bad' } })).status).to.equal(422);
    });

    it('confirm sets the password, spends the token and revokes existing tokens', async () => {
      const s = await registerAndLogin();
      const token = await resetToken(s.email);
      const weak = await t.request('POST', '/auth/password-reset/confirm', { token: null, body: { token, new_password: 'weak' } });
      expect(weak.status).to.equal(422);
      const ok = await t.request('POST', '/auth/password-reset/confirm', { token: null, body: { token, new_password: 'a-new-password-9' } });
      expect(ok.status, ok.text).to.equal(200);
      expect((await t.request('GET', '/auth/me', { token: s.token })).status).to.equal(401);
      expect((await t.request('POST', '/auth/refresh', { token: null, body: { refresh_token: s.refresh_token } })).status).to.equal(401);
      expect((await t.request('POST', '/auth/login', { token: null, body: { email: s.email, password: PASSWORD } })).status).to.equal(401);
      const again = await t.request('POST', '/auth/login', { token: null, body: { email: s.email, password: 'a-new-password-9' } });
      expect(again.status).to.equal(200);
      expect((await t.request('GET', '/auth/me', { token: again.body.token })).status).to.equal(200);
      const spent = await t.request('POST', '/auth/password-reset/confirm', { token: null, body: { token, new_password: 'another-password-9' } });
      expect(spent.status).to.equal(400);
    });

    it('refuses an unknown or expired token with 400', async () => {
      const s = await registerAndLogin();
      const token = await resetToken(s.email);
      await t.host.services.db('password_resets').where({ user_id: s.user.id }).update({ expires_at: Math.floor(Date.now() / 1000) - 1 });
      expect((await t.request('POST', '/auth/password-reset/confirm', { token: null, body: { token, new_password: 'a-new-password-9' } })).status).to.equal(400);
      expect((await t.request('POST', '/auth/password-reset/confirm', { token: null, body: { token: 'unknown', new_password: 'a-new-password-9' } })).status).to.equal(400);
      expect((await t.request('POST', '/auth/password-reset/confirm', { token: null, body: {} })).status).to.equal(422);
    });
  });

  describe('POST /auth/login-form', () => {
    it('answers the RFC 6749 token response with no-store', async () => {
      const s = await registerAndLogin();
      const r = await t.request('POST', '/auth/login-form', { token: null, form: { username: s.email, password: PASSWORD, grant_type: 'password' } });
      expect(r.status).to.equal(200);
      expect(r.headers.get('cache-control')).to.equal('no-store');
      expect(r.body).to.have.all.keys('access_token', 'token_type', 'expires_in', 'refresh_token');
      expect(r.body.token_type).to.equal('bearer');
      expect((await t.request('GET', '/auth/me', { token: r.body.access_token })).status).to.equal(200);
    });

    it('answers the §5.2 error codes', async () => {
      const s = await registerAndLogin();
      const grant = await t.request('POST', '/auth/login-form', { token: null, form: { username: s.email, password: 'wrong-pass-1' } });
      expect(grant.status).to.equal(400);
      expect(grant.body).to.include({ error: 'invalid_grant', code: 'INVALID_GRANT' });
      expect(grant.body.detail).to.be.a('string');
      expect(grant.headers.get('cache-control')).to.equal('no-store');
      const type = await t.request('POST', '/auth/login-form', { token: null, form: { username: s.email, password: PASSWORD, grant_type: 'client_credentials' } });
      expect(type.body.error).to.equal('unsupported_grant_type');
      const missing = await t.request('POST', '/auth/login-form', { token: null, form: { username: s.email } });
      expect(missing.status).to.equal(400);
      expect(missing.body.error).to.equal('invalid_request');
      const json = await t.request('POST', '/auth/login-form', { token: null, body: { username: s.email, password: PASSWORD } });
      expect(json.body.error).to.equal('invalid_request');
    });
  });
});

describe('auth: revocation survives a restart', () => {
  it('a logged-out token stays refused after the host restarts', async () => {
    const first = await startHost({ plugins: [authPlugin] });
    const email = 'restart@example.org';
    await first.request('POST', '/auth/register', { token: null, body: { email, password: PASSWORD, name: 'R' } });
    const login = await first.request('POST', '/auth/login', { token: null, body: { email, password: PASSWORD } });
    const keep = await first.request('POST', '/auth/login', { token: null, body: { email, password: PASSWORD } });
    await first.request('POST', '/auth/logout', { token: login.body.token });
    await first.host.stop();
    const second = await startHost({ plugins: [authPlugin], dataDir: first.dataDir });
    try {
      expect((await second.request('GET', '/auth/me', { token: login.body.token })).status).to.equal(401);
      // The generated secret is kept too, so other tokens stay valid.
      expect((await second.request('GET', '/auth/me', { token: keep.body.token })).status).to.equal(200);
    } finally {
      await second.stop();
    }
  });
});

describe('auth: login throttling', () => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ plugins: [authPlugin], config: { auth: { loginThrottle: { accountFailures: 3, addressFailures: 5, windowSeconds: 60 } } } });
    for (const who of ['a', 'b', 'c']) {
      await t.request('POST', '/auth/register', { token: null, body: { email: `${who}@throttle.org`, password: PASSWORD, name: who } });
    }
  });
  after(() => t.stop());
  const login = (email: string, password: string, ip: string) =>
    t.request('POST', '/auth/login', { token: null, body: { email, password }, headers: { 'x-forwarded-for': ip } });

  it('locks an account after repeated failures, from any address, even with the right password', async () => {
    for (let i = 0; i < 3; i++) expect((await login('a@throttle.org', 'wrong-pass-1', `10.1.0.${i}`)).status).to.equal(401);
    const locked = await login('a@throttle.org', PASSWORD, '10.1.0.9');
    expect(locked.status).to.equal(429);
    expect(Number(locked.headers.get('retry-after'))).to.be.within(1, 60);
    // Unknown accounts are throttled the same way.
    for (let i = 0; i < 3; i++) await login('ghost@throttle.org', 'wrong-pass-1', `10.2.0.${i}`);
    expect((await login('ghost@throttle.org', 'wrong-pass-1', '10.2.0.9')).status).to.equal(429);
    expect((await login('b@throttle.org', PASSWORD, '10.1.0.9')).status).to.equal(200);
  });

  it('counts concurrent guesses before hashing, so a burst cannot pass the limit', async () => {
    await t.request('POST', '/auth/register', { token: null, body: { email: 'burst@throttle.org', password: PASSWORD, name: 'burst' } });
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => login('burst@throttle.org', 'wrong-pass-1', `10.5.${i}.1`)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).to.have.length(3);
    expect(statuses.filter((s) => s === 429)).to.have.length(9);
  });

  it('throttles one client address across accounts', async () => {
    for (let i = 0; i < 5; i++) await login(`nobody${i}@throttle.org`, 'wrong-pass-1', '10.9.9.9');
    const r = await login('c@throttle.org', PASSWORD, '10.9.9.9');
    expect(r.status).to.equal(429);
    expect(r.headers.get('retry-after')).to.match(/^\d+$/);
    expect((await login('c@throttle.org', PASSWORD, '10.9.9.10')).status).to.equal(200);
  });
});

describe('auth: reset mail over SMTP', () => {
  it('sends the reset message with nodemailer and marks it sent', async () => {
    const smtp = await startSmtp();
    const t = await startHost({ plugins: [authPlugin], config: { mail: { smtpUrl: `smtp://127.0.0.1:${smtp.port}`, resetUrl: 'https://app.example/reset?token={token}' } } });
    try {
      await t.request('POST', '/auth/register', { token: null, body: { email: 'mail@example.org', password: PASSWORD, name: 'M' } });
      expect((await t.request('POST', '/auth/password-reset/request', { token: null, body: { email: 'mail@example.org' } })).status).to.equal(202);
      await t.host.service(accountsRef).settle();
      const row = await t.host.services.db('mail_outbox').where({ to_address: 'mail@example.org' }).first();
      expect(row.status).to.equal('sent');
      expect(smtp.messages).to.have.length(1);
      expect(smtp.messages[0]).to.match(/To: mail@example.org/);
      expect(smtp.messages[0]).to.include('https://app.example/reset?token=');
    } finally {
      await t.stop();
      await smtp.close();
    }
  });
});

describe('auth: WebSockets use the same verifier', () => {
  it('a revoked token is refused at the upgrade', async () => {
    const echo = definePlugin({
      id: 'ws-echo',
      prefix: '/ws-echo',
      deps: {},
      routes: () => [],
      sockets: [{ path: '/stream', summary: 'hello', access: 'viewer', onConnection: (ws, { caller }) => ws.send(caller!.id) }],
    });
    const t = await startHost({ plugins: [authPlugin, echo] });
    const open = (token: string) =>
      new Promise<string>((resolve) => {
        const ws = new WebSocket(`ws://127.0.0.1:${t.port}/ws-echo/stream?token=${token}`);
        ws.on('message', (m) => {
          resolve(`message:${(m as Buffer).toString('utf8')}`);
          ws.close();
        });
        ws.on('unexpected-response', (_req, res) => resolve(`status:${res.statusCode}`));
        ws.on('error', () => undefined);
      });
    try {
      await t.request('POST', '/auth/register', { token: null, body: { email: 'ws@example.org', password: PASSWORD, name: 'W' } });
      const login = await t.request('POST', '/auth/login', { token: null, body: { email: 'ws@example.org', password: PASSWORD } });
      expect(await open(login.body.token)).to.equal(`message:${login.body.user.id}`);
      await t.request('POST', '/auth/logout', { token: login.body.token });
      expect(await open(login.body.token)).to.equal('status:401');
    } finally {
      await t.stop();
    }
  });
});
