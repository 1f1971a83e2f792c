import crypto, { type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Request } from 'express';
import jwt from 'jsonwebtoken';
import passport from 'passport';
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt';
import type { Config } from '../config';
import type { Db } from '../db';
import { Unauthorized } from '../errors';
import { ROLES, type Caller, type Role } from '../roles';

export interface TokenClaims {
  sub: string;
  tenant: string;
  role: Role;
  jti: string;
  iat: number;
  exp: number;
  iss: string;
  aud: string;
  email?: string;
}

export type VerifyResult =
  | { valid: true; claims: TokenClaims }
  | { valid: false; reason: 'expired' | 'revoked' | 'bad signature' | 'malformed' | 'unknown user' };

/**
 * Extra ways to authenticate a request (e.g. ingest keys); return null when not theirs
 * (synchronously when possible: every request asks every authenticator).
 */
export type Authenticator = (req: Request) => Promise<Caller | null> | Caller | null;
/** A check run on every verified token; returns a reason to refuse it, or null. */
export type ClaimsCheck = (claims: TokenClaims) => Promise<VerifyResult | null> | VerifyResult | null;

/** How many verified tokens are remembered (see AuthService.authenticate). */
export const VERIFIED_CACHE_SIZE = 10_000;
const BEARER = /^bearer\s+(\S+)\s*$/i;

const ALGORITHM = 'HS256';

/** The secret from config, or one generated once and kept (mode 0600) in the data directory. */
export function loadSecret(config: Config): KeyObject {
  if (config.auth.jwtSecret) return crypto.createSecretKey(Buffer.from(config.auth.jwtSecret, 'utf8'));
  fs.mkdirSync(config.dataDir, { recursive: true });
  const file = path.join(config.dataDir, 'jwt-secret');
  let secret: Buffer;
  try {
    secret = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  } catch {
    secret = crypto.randomBytes(48);
    fs.writeFileSync(file, secret.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  }
  // A KeyObject verifies ~40x faster than a string secret in jsonwebtoken.
  return crypto.createSecretKey(secret);
}

/** The one token signer and verifier: the HTTP pipeline, the hub and every plugin use it. */
export class AuthService {
  private readonly checks: ClaimsCheck[] = [];
  private readonly authenticators: Authenticator[] = [];
  private readonly passport = new passport.Passport();
  private readonly verifyOptions: jwt.VerifyOptions & { complete?: false };
  /** Bearer token -> the claims passport verified in it (signature, algorithm, iss, aud). */
  private readonly verified = new Map<string, TokenClaims>();

  /** Tokens remembered as verified (at most VERIFIED_CACHE_SIZE). */
  get rememberedTokens(): number {
    return this.verified.size;
  }

  constructor(
    private readonly config: Config,
    private readonly db: Db,
    private readonly key: KeyObject,
  ) {
    this.verifyOptions = { algorithms: [ALGORITHM], issuer: config.auth.issuer, audience: config.auth.audience };
    this.passport.use(
      new JwtStrategy(
        {
          jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
          secretOrKey: key as unknown as string,
          algorithms: [ALGORITHM],
          issuer: config.auth.issuer,
          audience: config.auth.audience,
          passReqToCallback: true,
        },
        (req: Request, claims: TokenClaims, done: (err: unknown, user?: Caller | false, info?: unknown) => void) => {
          this.runChecks(claims).then(
            (r) => {
              if (!r.valid) return done(null, false, r.reason);
              const raw = BEARER.exec(req.headers.authorization ?? '')?.[1];
              if (raw) this.remember(raw, r.claims);
              done(null, callerOf(r.claims));
            },
            (err) => done(err),
          );
        },
      ),
    );
  }

  /** Adds a check every token must pass (revocation, user still exists, ...). */
  addClaimsCheck(check: ClaimsCheck): void {
    this.checks.push(check);
  }

  /** Adds another credential kind; tried before bearer tokens. */
  addAuthenticator(fn: Authenticator): void {
    this.authenticators.push(fn);
  }

  sign(user: { id: string; tenantId: string; role: Role; email?: string }, ttlSeconds = this.config.auth.tokenTtlSeconds) {
    const jti = crypto.randomUUID();
    const now = Math.floor(Date.now() / 1000);
    const exp = now + ttlSeconds;
    const token = jwt.sign(
      { sub: user.id, tenant: user.tenantId, role: user.role, email: user.email, jti, iat: now, exp },
      this.key,
      { algorithm: ALGORITHM, issuer: this.config.auth.issuer, audience: this.config.auth.audience },
    );
    return { token, jti, exp, expiresIn: ttlSeconds };
  }

  /** Verifies a token without throwing; the reason says why it is not valid. */
  async verify(token: string): Promise<VerifyResult> {
    const known = this.verified.get(token);
    if (known) {
      if (known.exp > Math.floor(Date.now() / 1000)) return this.runChecks(known);
      this.verified.delete(token);
      return { valid: false, reason: 'expired' };
    }
    let claims: TokenClaims;
    try {
      claims = jwt.verify(token, this.key, this.verifyOptions) as unknown as TokenClaims;
    } catch (err) {
      const e = err as Error;
      if (e.name === 'TokenExpiredError') return { valid: false, reason: 'expired' };
      if (e.message === 'invalid signature') return { valid: false, reason: 'bad signature' };
      if (/algorithm|signature/i.test(e.message)) return { valid: false, reason: 'bad signature' };
      return { valid: false, reason: 'malformed' };
    }
    if (!isClaims(claims)) return { valid: false, reason: 'malformed' };
    const result = await this.runChecks(claims);
    if (result.valid) this.remember(token, claims);
    return result;
  }

  /**
   * Whether the token a long-lived connection was opened with is still good: not expired,
   * not revoked since (logout, password reset, refresh reuse).
   */
  async stillValid(caller: Caller): Promise<boolean> {
    if (caller.kind !== 'user' || !caller.jti || !caller.exp) return true;
    if (caller.exp <= Math.floor(Date.now() / 1000)) return false;
    const claims = { sub: caller.id, tenant: caller.tenantId, role: caller.role, jti: caller.jti, exp: caller.exp, iat: caller.iat ?? 0, iss: this.config.auth.issuer, aud: this.config.auth.audience };
    return (await this.runChecks(claims)).valid;
  }

  private async runChecks(claims: TokenClaims): Promise<VerifyResult> {
    if (!isClaims(claims)) return { valid: false, reason: 'malformed' };
    for (const check of this.checks) {
      const r = check(claims);
      const refusal = r instanceof Promise ? await r : r;
      if (refusal) return refusal;
    }
    return { valid: true, claims };
  }

  /** Keeps verified claims under their token; the oldest entry goes when the cache is full. */
  private remember(raw: string, claims: TokenClaims): void {
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(raw, claims);
  }

  /**
   * The caller of a request: null when it carries no credentials at all, a Caller when
   * they are good, and Unauthorized when they are present but bad.
   */
  async authenticate(req: Request): Promise<Caller | null> {
    for (const fn of this.authenticators) {
      const r = fn(req);
      const caller = r instanceof Promise ? await r : r;
      if (caller) return caller;
    }
    const header = req.headers.authorization;
    if (!header) return null;
    const bearer = BEARER.exec(header);
    if (!bearer) throw new Unauthorized('Authorization header must be "Bearer <token>"');
    // A token passport has verified once is not verified again: the same string carries the
    // same signature, issuer and audience. Expiry and the claims checks (revocation) are
    // still applied on every request.
    const known = this.verified.get(bearer[1]);
    if (known) {
      if (known.exp <= Math.floor(Date.now() / 1000)) {
        this.verified.delete(bearer[1]);
        throw new Unauthorized('Invalid token: expired');
      }
      const r = await this.runChecks(known);
      if (!r.valid) throw new Unauthorized(describeInfo(r.reason));
      return callerOf(known);
    }
    return new Promise((resolve, reject) => {
      const run = this.passport.authenticate('jwt', { session: false }, (err: unknown, user: Caller | false, info: unknown) => {
        if (err) return reject(err);
        if (!user) return reject(new Unauthorized(describeInfo(info)));
        resolve(user);
      });
      run(req, undefined, reject);
    });
  }

  get database(): Db {
    return this.db;
  }
}

function describeInfo(info: unknown): string {
  if (typeof info === 'string') return `Invalid token: ${info}`;
  const e = info as Error | undefined;
  if (e?.name === 'TokenExpiredError') return 'Invalid token: expired';
  if (e?.message) return `Invalid token: ${e.message}`;
  return 'Invalid token';
}

function isClaims(c: unknown): c is TokenClaims {
  const o = c as TokenClaims;
  return (
    typeof o === 'object' && o !== null &&
    typeof o.sub === 'string' && typeof o.tenant === 'string' && typeof o.jti === 'string' &&
    typeof o.exp === 'number' && (ROLES as readonly string[]).includes(o.role)
  );
}

export function callerOf(claims: TokenClaims): Caller {
  return { kind: 'user', id: claims.sub, tenantId: claims.tenant, role: claims.role, email: claims.email, jti: claims.jti, exp: claims.exp, iat: claims.iat };
}
