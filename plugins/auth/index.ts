import type { Response } from 'express';
import { z } from 'zod';
import { accountsRef, type AccountUser, type IssuedTokens } from '../../core/contracts/accounts';
import { BadRequest, HttpError, NotFound } from '../../core/errors';
import { definePlugin, provide } from '../../core/plugin';
import { core } from '../../core/services';
import { ROLES } from '../../core/roles';
import { Accounts } from './accounts';
import { passwordProblem, PASSWORD_RULE } from './passwords';
import { Sessions } from './sessions';
import { authMigrations, publicUser, type UserRow } from './store';
import { LoginThrottle, MemoryCounter, RedisCounter } from './throttle';

const email = z.email().max(320);
const password = z.string().max(128).superRefine((p, ctx) => {
  const problem = passwordProblem(p);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
const user = z.object({ id: z.string(), email: z.string(), name: z.string(), role: z.string(), tenant_id: z.string(), created_at: z.string() });
const tokenResponse = z.object({
  token: z.string(),
  access_token: z.string(),
  token_type: z.literal('bearer'),
  expires_in: z.number().int(),
  refresh_token: z.string(),
  user,
});
const message = z.object({ detail: z.string() });

function loginBody(u: AccountUser, t: IssuedTokens) {
  return { token: t.token, access_token: t.token, token_type: 'bearer' as const, expires_in: t.expiresIn, refresh_token: t.refreshToken, user: publicUser(u) };
}

/** RFC 6749 §5.2 error response. */
function oauthError(res: Response, status: number, error: string, detail: string, headers: Record<string, string> = {}): void {
  res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache', ...headers });
  // RFC 6749 §5.2 `error`, and the `{detail, code}` every error body of the API has.
  res.status(status).json({ error, detail, code: error.toUpperCase() });
}

const RESET_ACCEPTED = 'If an account with this e-mail exists, a password reset message has been sent';

export default definePlugin({
  id: 'auth',
  prefix: '/auth',
  deps: { accounts: accountsRef, auth: core.auth, db: core.db, actions: core.actions },
  migrations: authMigrations,
  provides: [
    provide(accountsRef, {
      deps: { db: core.db, config: core.config, log: core.log, events: core.events, auth: core.auth, revocations: core.revocations, redis: core.redis, mailer: core.mailer },
      factory: (d) => {
        const counter = d.redis ? new RedisCounter(d.redis, `${d.config.limits.redisPrefix}:login:`) : new MemoryCounter();
        const sessions = new Sessions(d.db, d.auth, d.revocations, d.config);
        return new Accounts(d.db, d.config, d.log, sessions, new LoginThrottle(d.config, counter, d.log), d.mailer, d.events);
      },
      start: (svc) => (svc as Accounts).start(),
      stop: (svc) => svc.settle(),
    }),
  ],
  routes: (route) => [
    route({
      method: 'post',
      path: '/users',
      summary: 'Create a user with a role in an existing tenant (admins only; beyond the spec)',
      description: `How platform staff (operators, admins) and further users of a tenant are made. Password rule: ${PASSWORD_RULE}.`,
      access: 'admin',
      body: z.object({ email, password, name: z.string().trim().min(1).max(200), role: z.enum(ROLES), tenant_id: z.string().min(1).max(64) }),
      response: user,
      status: 201,
      errors: [404, 409],
      handler: async ({ body, caller, services }) => {
        const u = await services.accounts.createUser({ email: body.email, password: body.password, name: body.name, role: body.role, tenantId: body.tenant_id });
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'create_user', target_type: 'user', target_id: u.id, result: 'succeeded', detail: { role: u.role, tenant_id: u.tenant_id }, tenant_id: u.tenant_id });
        return publicUser(u);
      },
    }),
    route({
      method: 'post',
      path: '/register',
      summary: 'Create a user account (its own tenant on the free plan, role member)',
      description: `Password rule: ${PASSWORD_RULE}. A taken e-mail answers 409.`,
      access: 'public',
      limitByAddress: true,
      body: z.object({ email, password, name: z.string().trim().min(1).max(200) }),
      response: user,
      status: 201,
      errors: [409, 429],
      handler: async ({ body, services }) => publicUser(await services.accounts.register(body)),
    }),
    route({
      method: 'post',
      path: '/login',
      summary: 'Exchange e-mail and password for a token, a refresh token and the user',
      access: 'public',
      limitByAddress: true,
      body: z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) }),
      response: tokenResponse,
      errors: [401, 429],
      handler: async ({ body, services, req }) => {
        const { user: u, tokens } = await services.accounts.login(body.email, body.password, req.ip ?? 'unknown');
        return loginBody(u, tokens);
      },
    }),
    route({
      method: 'post',
      path: '/refresh',
      summary: 'Rotate a refresh token: spends it and returns a new token pair',
      description: 'Presenting a refresh token that was already used revokes its whole session (every token of that login).',
      access: 'public',
      limitByAddress: true,
      body: z.object({ refresh_token: z.string().min(1).max(512) }),
      response: tokenResponse,
      errors: [401, 429],
      handler: async ({ body, services }) => {
        const { user: u, tokens } = await services.accounts.refresh(body.refresh_token);
        return loginBody(u, tokens);
      },
    }),
    route({
      method: 'get',
      path: '/me',
      summary: 'The current user',
      access: 'authenticated',
      response: user.extend({ token_expires_at: z.string().nullable() }),
      errors: [404],
      handler: async ({ caller, services }) => {
        const row = await services.db<UserRow>('users').where({ id: caller!.id }).first('id', 'email', 'name', 'role', 'tenant_id', 'created_at');
        if (!row) throw new NotFound('No user for these credentials');
        return { ...publicUser(row), token_expires_at: caller!.exp ? new Date(caller!.exp * 1000).toISOString() : null };
      },
    }),
    route({
      method: 'post',
      path: '/logout',
      summary: 'Revoke this token and its refresh token',
      access: 'authenticated',
      response: message,
      errors: [400],
      handler: async ({ caller, services }) => {
        if (!caller!.jti || !caller!.exp) throw new BadRequest('These credentials are not a session token');
        await services.accounts.endSession({ jti: caller!.jti, exp: caller!.exp }, { id: caller!.id, tenantId: caller!.tenantId });
        return { detail: 'Logged out' };
      },
    }),
    route({
      method: 'get',
      path: '/verify',
      summary: 'Whether a token is valid, and why not',
      access: 'public',
      limitByAddress: true,
      query: z.object({ token: z.string().min(1).max(8192) }),
      response: z.object({
        valid: z.boolean(),
        reason: z.enum(['expired', 'revoked', 'bad signature', 'malformed', 'unknown user']).optional(),
        expires_at: z.string().optional(),
        user_id: z.string().optional(),
        tenant_id: z.string().optional(),
        role: z.string().optional(),
      }),
      errors: [429],
      handler: async ({ query, services }) => {
        const r = await services.auth.verify(query.token);
        if (!r.valid) return { valid: false, reason: r.reason };
        const c = r.claims;
        return { valid: true, expires_at: new Date(c.exp * 1000).toISOString(), user_id: c.sub, tenant_id: c.tenant, role: c.role };
      },
    }),
    route({
      method: 'post',
      path: '/password-reset/request',
      summary: 'Send a password reset message (the answer is the same whether or not the account exists)',
      access: 'public',
      limitByAddress: true,
      body: z.object({ email }),
      response: message,
      status: 202,
      errors: [429],
      handler: ({ body, services }) => {
        services.accounts.requestReset(body.email);
        return { detail: RESET_ACCEPTED };
      },
    }),
    route({
      method: 'post',
      path: '/password-reset/confirm',
      summary: 'Set a new password with a reset token (single use, 1 h); ends every session',
      access: 'public',
      limitByAddress: true,
      body: z.object({ token: z.string().min(1).max(512), new_password: password }),
      response: message,
      errors: [400, 429],
      handler: async ({ body, services }) => {
        await services.accounts.confirmReset(body.token, body.new_password);
        return { detail: 'Password changed; log in again' };
      },
    }),
    route({
      method: 'post',
      path: '/login-form',
      summary: 'OAuth2 password grant (RFC 6749 §4.3) with a form body',
      description: 'Answers the §5.1 token response with Cache-Control: no-store; failures carry the §5.2 `error` code.',
      access: 'public',
      limitByAddress: true,
      bodyType: 'form',
      body: z.object({
        username: z.string().optional(),
        password: z.string().optional(),
        grant_type: z.string().optional(),
        scope: z.string().optional(),
      }),
      response: z.object({ access_token: z.string(), token_type: z.literal('bearer'), expires_in: z.number().int(), refresh_token: z.string() }),
      errors: [400, 429],
      handler: async ({ body, services, req, res }) => {
        if (!req.is('application/x-www-form-urlencoded')) {
          return oauthError(res, 400, 'invalid_request', 'The body must be application/x-www-form-urlencoded');
        }
        if (body.grant_type !== undefined && body.grant_type !== 'password') {
          return oauthError(res, 400, 'unsupported_grant_type', 'Only grant_type=password is supported');
        }
        if (!body.username || !body.password) return oauthError(res, 400, 'invalid_request', 'username and password are required');
        try {
          const { tokens } = await services.accounts.login(body.username, body.password, req.ip ?? 'unknown');
          res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
          return { access_token: tokens.token, token_type: 'bearer' as const, expires_in: tokens.expiresIn, refresh_token: tokens.refreshToken };
        } catch (err) {
          if (err instanceof HttpError && err.status === 401) return oauthError(res, 400, 'invalid_grant', 'Incorrect username or password');
          if (err instanceof HttpError && err.status === 429) return oauthError(res, 429, 'invalid_grant', String(err.detail), err.headers);
          throw err;
        }
      },
    }),
  ],
});
