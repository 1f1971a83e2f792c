import crypto from 'node:crypto';
import type { Revocations } from '../../core/auth/revocations';
import type { AuthService } from '../../core/auth/service';
import type { Config } from '../../core/config';
import type { IssuedTokens } from '../../core/contracts/accounts';
import { nowIso, type Db } from '../../core/db';
import { Unauthorized } from '../../core/errors';
import type { UserRow } from './store';

const nowSec = () => Math.floor(Date.now() / 1000);

/** Secrets handed to clients are stored only as their SHA-256. */
export function hashSecret(secret: string): string {
  return crypto.createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function newSecret(): string {
  return crypto.randomBytes(32).toString('base64url');
}

interface RefreshRow {
  id: string;
  family_id: string;
  user_id: string;
  tenant_id: string;
  token_hash: string;
  access_jti: string;
  access_exp: number | string;
  expires_at: number | string;
  used_at: string | null;
  revoked_at: string | null;
}

/**
 * Login sessions: an access token plus a refresh token. Each refresh spends the refresh
 * token and issues a new pair in the same family; presenting a spent one is taken as theft
 * and revokes the whole family, access tokens included.
 */
export class Sessions {
  /** Told when a spent refresh token comes back (its family is revoked as stolen). */
  onReuse: ((r: { tenant_id: string; user_id: string; family_id: string }) => void) | null = null;

  constructor(
    private readonly db: Db,
    private readonly auth: AuthService,
    private readonly revocations: Revocations,
    private readonly config: Config,
  ) {}

  async issue(user: UserRow, familyId: string = crypto.randomUUID()): Promise<IssuedTokens> {
    const access = this.auth.sign({ id: user.id, tenantId: user.tenant_id, role: user.role, email: user.email });
    const refreshToken = newSecret();
    await this.db('refresh_tokens').insert({
      id: crypto.randomUUID(),
      family_id: familyId,
      user_id: user.id,
      tenant_id: user.tenant_id,
      token_hash: hashSecret(refreshToken),
      access_jti: access.jti,
      access_exp: access.exp,
      expires_at: nowSec() + this.config.auth.refreshTtlSeconds,
      used_at: null,
      revoked_at: null,
      created_at: nowIso(),
    });
    return { ...access, refreshToken };
  }

  /** Spends a refresh token and issues a new pair; throws Unauthorized when it cannot. */
  async rotate(refreshToken: string): Promise<{ user: UserRow; tokens: IssuedTokens }> {
    const row = await this.db<RefreshRow>('refresh_tokens').where({ token_hash: hashSecret(refreshToken) }).first();
    if (!row) throw new Unauthorized('Invalid refresh token');
    if (row.revoked_at) throw new Unauthorized('Refresh token revoked');
    if (row.used_at) {
      this.onReuse?.({ tenant_id: row.tenant_id, user_id: row.user_id, family_id: row.family_id });
      await this.revokeFamily(row.family_id);
      throw new Unauthorized('Refresh token already used: its session has been revoked');
    }
    if (Number(row.expires_at) <= nowSec()) throw new Unauthorized('Refresh token expired');
    // Only one of two concurrent uses can win; the loser is treated as a reuse.
    const won = await this.db('refresh_tokens').where({ id: row.id }).whereNull('used_at').update({ used_at: nowIso() });
    if (won !== 1) {
      this.onReuse?.({ tenant_id: row.tenant_id, user_id: row.user_id, family_id: row.family_id });
      await this.revokeFamily(row.family_id);
      throw new Unauthorized('Refresh token already used: its session has been revoked');
    }
    const user = await this.db<UserRow>('users').where({ id: row.user_id }).first();
    if (!user) throw new Unauthorized('Unknown user');
    return { user, tokens: await this.issue(user, row.family_id) };
  }

  /** Logout: the token itself and the session (refresh family) it came from. */
  async endSession(access: { jti: string; exp: number }, user: { id: string; tenantId: string }): Promise<void> {
    await this.revocations.revokeTokens([access], user);
    const row = await this.db<RefreshRow>('refresh_tokens').where({ access_jti: access.jti }).first('family_id');
    if (row) await this.revokeFamily(row.family_id);
  }

  /** Password reset: every session of the user, and any other token issued before now. */
  async endAllForUser(user: { id: string; tenantId: string }): Promise<void> {
    const families = await this.db<RefreshRow>('refresh_tokens').where({ user_id: user.id }).whereNull('revoked_at').distinct('family_id');
    for (const f of families) await this.revokeFamily(f.family_id);
    await this.revocations.revokeUser(user, this.config.auth.tokenTtlSeconds);
  }

  async revokeFamily(familyId: string): Promise<void> {
    const rows = await this.db<RefreshRow>('refresh_tokens').where({ family_id: familyId });
    if (!rows.length) return;
    await this.db('refresh_tokens').where({ family_id: familyId }).whereNull('revoked_at').update({ revoked_at: nowIso() });
    await this.revocations.revokeTokens(
      rows.map((r) => ({ jti: r.access_jti, exp: Number(r.access_exp) })),
      { id: rows[0].user_id, tenantId: rows[0].tenant_id },
    );
  }
}
