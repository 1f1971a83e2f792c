// User accounts for other plugins: provided by plugin `auth` (registration, login, sessions,
// password reset), used by security (account locks, ending sessions), automation and
// commercial (onboarding a customer's first user), stability (scratch users) and the
// readiness checks. Core keeps only token verification and revocation (core.auth,
// core.revocations).
import type { HttpError } from '../errors';
import { createServiceRef } from '../plugin';
import type { Role } from '../roles';

export interface AccountUser {
  id: string;
  tenant_id: string;
  email: string;
  name: string;
  role: Role;
  created_at: string;
  updated_at: string;
}

export interface IssuedTokens {
  token: string;
  jti: string;
  exp: number;
  expiresIn: number;
  refreshToken: string;
}

export interface AccountsService {
  /** Self-registration: a tenant of its own on the free plan, role member. */
  register(input: { email: string; password: string; name: string }): Promise<AccountUser>;
  /** A user with any role in an existing tenant (404 unknown tenant, 409 taken e-mail). */
  createUser(input: { email: string; password: string; name: string; role: Role; tenantId: string }): Promise<AccountUser>;
  /** Checks a password (throttled; 401 or 429) and opens a session. */
  login(email: string, password: string, address: string): Promise<{ user: AccountUser; tokens: IssuedTokens }>;
  /** Spends a refresh token and opens the next pair of its session (401 when it cannot). */
  refresh(refreshToken: string): Promise<{ user: AccountUser; tokens: IssuedTokens }>;
  /** Logout: this access token and its session. */
  endSession(access: { jti: string; exp: number }, user: { id: string; tenantId: string }): Promise<void>;
  /** Every session of a user and every token issued to it before now. */
  endAllSessions(user: { id: string; tenantId: string }): Promise<void>;
  /** Answers at once; the reset token and its mail are made afterwards, only for a real account. */
  requestReset(email: string): void;
  confirmReset(token: string, newPassword: string): Promise<AccountUser>;
  /** Whether the account with this e-mail has this password; null when there is no such account. */
  passwordMatches(email: string, password: string): Promise<boolean | null>;
  /** When each user of the tenant last signed in (opened a session): user id -> ISO time. */
  lastSignIns(tenantId: string): Promise<Map<string, string>>;
  /** Adds a check run after a correct password (e.g. a locked account); an error refuses the login. */
  addLoginCheck(check: (user: AccountUser) => HttpError | null): void;
  /** Waits for reset work still running. */
  settle(): Promise<void>;
  /** The admin account made on this host's first start (its password is shown once), or null. */
  readonly firstAdmin: { email: string; password: string } | null;
}

export const accountsRef = createServiceRef<AccountsService>('auth.accounts');
