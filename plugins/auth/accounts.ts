import crypto from 'node:crypto';
import type { Config } from '../../core/config';
import type { AccountsService, AccountUser, IssuedTokens } from '../../core/contracts/accounts';
import { nowIso, type Db } from '../../core/db';
import { BadRequest, Conflict, NotFound, TooManyRequests, Unauthorized } from '../../core/errors';
import type { Role } from '../../core/roles';
import type { Logger } from '../../core/logger';
import type { EventBus } from '../../core/events';
import type { HttpError } from '../../core/errors';
import type { Mailer } from '../../core/mail';
import { dummyHash, hashPassword, verifyPassword } from './passwords';
import { hashSecret, newSecret, type Sessions } from './sessions';
import { bootstrapAdmin, createUser, findUserByEmail, type UserRow } from './store';
import type { LoginThrottle } from './throttle';

/** The plan a self-registered user's new tenant starts on. */
export const SIGNUP_PLAN = 'free';

/** Registration, login, sessions, password reset: the service the auth plugin provides (accountsRef). */
export class Accounts implements AccountsService {
  firstAdmin: { email: string; password: string } | null = null;
  /** Reset work runs after the 202 is sent; stop waits for it. */
  private readonly pending = new Set<Promise<void>>();
  /** Checks a user must pass after a correct password (e.g. a locked account); an error refuses the login. */
  private readonly loginChecks: Array<(user: AccountUser) => HttpError | null> = [];

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly log: Logger,
    readonly sessions: Sessions,
    private readonly throttle: LoginThrottle,
    private readonly mailer: Mailer,
    /** Refusals are published as `security.<kind>` for the security plugin. */
    private readonly events?: EventBus,
  ) {
    if (events) sessions.onReuse = (r) => events.publish('security.refresh_reuse', r);
    // Made now, so that even the first unknown e-mail costs one argon2 verify, not a hash too.
    void dummyHash();
  }

  /** On the first start (no users yet): the platform tenant and its admin. */
  async start(): Promise<void> {
    this.firstAdmin = await bootstrapAdmin(this.db, this.config);
  }

  /**
   * A self-registered user gets a tenant of its own on the free plan and the member role
   * in it: never a platform role (operator or admin).
   */
  async register(input: { email: string; password: string; name: string }): Promise<UserRow> {
    const email = input.email.toLowerCase();
    if (await findUserByEmail(this.db, email)) throw new Conflict('A user with this e-mail already exists');
    try {
      return await this.db.transaction(async (trx) => {
        const tenantId = crypto.randomUUID();
        await trx('tenants').insert({ id: tenantId, name: input.name, plan: SIGNUP_PLAN, domains: '[]', created_at: nowIso() });
        return createUser(trx, { tenantId, email, name: input.name, role: 'member', password: input.password });
      });
    } catch (err) {
      // Two registrations of one e-mail at once: the unique index decides.
      if (await findUserByEmail(this.db, email)) throw new Conflict('A user with this e-mail already exists');
      throw err;
    }
  }

  /** An admin's account creation: any role, in an existing tenant. */
  async createUser(input: { email: string; password: string; name: string; role: Role; tenantId: string }): Promise<UserRow> {
    const email = input.email.toLowerCase();
    if (!(await this.db('tenants').where({ id: input.tenantId }).first('id'))) throw new NotFound(`Unknown tenant "${input.tenantId}"`);
    if (await findUserByEmail(this.db, email)) throw new Conflict('A user with this e-mail already exists');
    try {
      return await createUser(this.db, { tenantId: input.tenantId, email, name: input.name, role: input.role, password: input.password });
    } catch (err) {
      if (await findUserByEmail(this.db, email)) throw new Conflict('A user with this e-mail already exists');
      throw err;
    }
  }

  /**
   * Checks a password. A wrong e-mail and a wrong password answer the same 401 after the
   * same argon2 work; repeated failures per account or per address answer 429.
   */
  async login(email: string, password: string, address: string): Promise<{ user: UserRow; tokens: IssuedTokens }> {
    const wait = await this.throttle.attempt(email, address);
    if (wait !== null) {
      this.events?.publish('security.login_throttled', { tenant_id: null, email, address, wait_seconds: wait });
      throw new TooManyRequests('Too many failed logins; try again later', wait);
    }
    const user = await findUserByEmail(this.db, email);
    const ok = await verifyPassword(user?.password_hash ?? (await dummyHash()), password);
    if (!user || !ok) {
      this.events?.publish('security.login_failed', { tenant_id: null, email, address });
      throw new Unauthorized('Incorrect e-mail or password');
    }
    for (const check of this.loginChecks) {
      const refusal = check(user);
      if (refusal) throw refusal;
    }
    await this.throttle.succeeded(email, address);
    return { user, tokens: await this.sessions.issue(user) };
  }

  /** Adds a check run after a correct password (the security plugin's account locks). */
  addLoginCheck(check: (user: AccountUser) => HttpError | null): void {
    this.loginChecks.push(check);
  }

  refresh(refreshToken: string): Promise<{ user: UserRow; tokens: IssuedTokens }> {
    return this.sessions.rotate(refreshToken);
  }

  endSession(access: { jti: string; exp: number }, user: { id: string; tenantId: string }): Promise<void> {
    return this.sessions.endSession(access, user);
  }

  endAllSessions(user: { id: string; tenantId: string }): Promise<void> {
    return this.sessions.endAllForUser(user);
  }

  async lastSignIns(tenantId: string): Promise<Map<string, string>> {
    const rows: Array<{ user_id: string; last: string }> = await this.db('refresh_tokens').where({ tenant_id: tenantId }).select('user_id').max({ last: 'created_at' }).groupBy('user_id');
    return new Map(rows.map((r) => [r.user_id, r.last]));
  }

  async passwordMatches(email: string, password: string): Promise<boolean | null> {
    const user = await findUserByEmail(this.db, email);
    return user ? verifyPassword(user.password_hash, password) : null;
  }

  /** Answers at once; the token and the mail are made afterwards, only for a real account. */
  requestReset(email: string): void {
    const work = this.createReset(email).catch((err: Error) => this.log.error({ err: err.message }, 'password reset request failed'));
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  private async createReset(email: string): Promise<void> {
    const user = await findUserByEmail(this.db, email);
    if (!user) return;
    const token = newSecret();
    const expiresAt = Math.floor(Date.now() / 1000) + this.config.auth.resetTtlSeconds;
    // A new request supersedes earlier unspent tokens.
    await this.db('password_resets').where({ user_id: user.id }).whereNull('used_at').delete();
    await this.db('password_resets').insert({
      id: crypto.randomUUID(),
      user_id: user.id,
      tenant_id: user.tenant_id,
      token_hash: hashSecret(token),
      expires_at: expiresAt,
      used_at: null,
      created_at: nowIso(),
    });
    const link = this.config.mail.resetUrl ? `\n\n${this.config.mail.resetUrl.replace('{token}', encodeURIComponent(token))}` : '';
    const minutes = Math.round(this.config.auth.resetTtlSeconds / 60);
    await this.mailer.send({
      tenantId: user.tenant_id,
      to: user.email,
      subject: 'Password reset',
      text:
        `A password reset was requested for ${user.email}.\n\nReset token: ${token}${link}\n\n` +
        `It can be used once within ${minutes} minutes. If you did not ask for it, ignore this message.\n`,
    });
  }

  /** Sets a new password with a reset token, spends the token and ends every session. */
  async confirmReset(token: string, newPassword: string): Promise<UserRow> {
    const invalid = new BadRequest('Invalid, used or expired reset token');
    const row = await this.db('password_resets').where({ token_hash: hashSecret(token) }).first();
    if (!row || row.used_at || Number(row.expires_at) <= Math.floor(Date.now() / 1000)) throw invalid;
    const spent = await this.db('password_resets').where({ id: row.id }).whereNull('used_at').update({ used_at: nowIso() });
    if (spent !== 1) throw invalid;
    const user = await this.db<UserRow>('users').where({ id: row.user_id }).first();
    if (!user) throw invalid;
    await this.db('users').where({ id: user.id }).update({ password_hash: await hashPassword(newPassword), updated_at: nowIso() });
    await this.sessions.endAllForUser({ id: user.id, tenantId: user.tenant_id });
    await this.throttle.succeeded(user.email);
    return user;
  }

  /** Waits for reset work still running (host stop, tests). */
  async settle(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
