import { nowIso, type Db } from '../db';
import type { ClaimsCheck, TokenClaims, VerifyResult } from './service';

const nowSec = () => Math.floor(Date.now() / 1000);
/** How far back each sync looks before the newest row it has seen. */
const OVERLAP_MS = 60_000;

interface RevokedRow {
  id: string;
  user_id: string;
  tenant_id: string;
  not_before: number | string | null;
  expires_at: number | string;
  created_at: string;
}

/**
 * Revoked tokens, kept in the database (so revocation survives a restart) and mirrored in
 * memory (so checking a token costs a map lookup, not a query). Rows other hosts write on a
 * shared database are picked up every `syncMs`.
 */
export class Revocations {
  private readonly jtis = new Map<string, number>();
  /** user id -> epoch second before which that user's tokens are refused. */
  private readonly cutoffs = new Map<string, { notBefore: number; exp: number }>();
  private lastSeen = '';
  private timer?: NodeJS.Timeout;
  private syncs = 0;

  constructor(
    private readonly db: Db,
    private readonly syncMs: number,
  ) {}

  /** Loads what is still relevant and starts following other hosts' writes. */
  async start(): Promise<void> {
    await this.sync(true);
    this.timer = setInterval(() => {
      this.sync(false).catch(() => undefined);
    }, this.syncMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The claims check the token verifier runs on every token. */
  readonly check: ClaimsCheck = (claims: TokenClaims): VerifyResult | null => this.refusal(claims);

  refusal(claims: TokenClaims): VerifyResult | null {
    if (this.jtis.has(claims.jti)) return { valid: false, reason: 'revoked' };
    const cut = this.cutoffs.get(claims.sub);
    if (cut && claims.iat < cut.notBefore) return { valid: false, reason: 'revoked' };
    return null;
  }

  /** Refuses one token (by jti) until it would have expired anyway. */
  async revokeTokens(tokens: Array<{ jti: string; exp: number }>, user: { id: string; tenantId: string }): Promise<void> {
    const live = tokens.filter((t) => t.exp > nowSec());
    if (!live.length) return;
    const created = nowIso();
    const rows = live.map((t) => ({ id: t.jti, user_id: user.id, tenant_id: user.tenantId, not_before: null, expires_at: t.exp, created_at: created }));
    await this.db('revoked_tokens').insert(rows).onConflict('id').ignore();
    for (const t of live) this.jtis.set(t.jti, t.exp);
  }

  /** Refuses every token of a user issued before now (password reset). */
  async revokeUser(user: { id: string; tenantId: string }, tokenTtlSeconds: number): Promise<void> {
    const notBefore = nowSec();
    const row = { id: `user:${user.id}`, user_id: user.id, tenant_id: user.tenantId, not_before: notBefore, expires_at: notBefore + tokenTtlSeconds, created_at: nowIso() };
    await this.db('revoked_tokens').insert(row).onConflict('id').merge(['not_before', 'expires_at', 'created_at']);
    this.cutoffs.set(user.id, { notBefore, exp: row.expires_at });
  }

  private async sync(initial: boolean): Promise<void> {
    const now = nowSec();
    const q = this.db<RevokedRow>('revoked_tokens');
    // Another host's clock may lag, or its commit may land late: re-read an overlap window
    // (rows are applied idempotently) so that no revocation is skipped for good.
    const from = this.lastSeen ? new Date(Date.parse(this.lastSeen) - OVERLAP_MS).toISOString() : '';
    const rows: RevokedRow[] = initial ? await q.where('expires_at', '>', now) : await q.where('created_at', '>=', from);
    for (const r of rows) {
      const exp = Number(r.expires_at);
      if (r.created_at > this.lastSeen) this.lastSeen = r.created_at;
      if (exp <= now) continue;
      if (r.id.startsWith('user:')) {
        const notBefore = Number(r.not_before ?? 0);
        const cur = this.cutoffs.get(r.user_id);
        if (!cur || cur.notBefore < notBefore) this.cutoffs.set(r.user_id, { notBefore, exp });
      } else {
        this.jtis.set(r.id, exp);
      }
    }
    // Forget what has expired; now and then clear it from the table too.
    for (const [k, exp] of this.jtis) if (exp <= now) this.jtis.delete(k);
    for (const [k, c] of this.cutoffs) if (c.exp <= now) this.cutoffs.delete(k);
    if (++this.syncs % 300 === 0) await this.db('revoked_tokens').where('expires_at', '<=', now).delete();
  }
}
