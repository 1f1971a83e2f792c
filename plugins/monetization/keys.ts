import crypto from 'node:crypto';
import type { Request } from 'express';
import { z } from 'zod';
import type { AuthService } from '../../core/auth/service';
import type { Db } from '../../core/db';
import { Forbidden, TooManyRequests, Unauthorized } from '../../core/errors';
import type { Caller } from '../../core/roles';

export const SCOPES = ['execute', 'read', 'write'] as const;
export type Scope = (typeof SCOPES)[number];
/** The one route the `execute` scope opens. */
export const EXECUTE_ROUTE = '/monetization/v1/public/workflows/{workflow_id}/execute';

export const apiKeyView = z.object({
  id: z.string(),
  tenant_id: z.string(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  rate_limit_per_minute: z.number().int(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
  state: z.enum(['active', 'expired', 'revoked']),
  created_by: z.string(),
  created_at: z.string(),
});
export type ApiKeyView = z.infer<typeof apiKeyView>;

export function hashKey(secret: string): string {
  return crypto.createHash('sha256').update(secret).digest('hex');
}

export function keyView(r: Record<string, any>, now: Date): ApiKeyView {
  const state = r.revoked_at ? 'revoked' : r.expires_at && r.expires_at <= now.toISOString() ? 'expired' : 'active';
  return {
    id: r.id, tenant_id: r.tenant_id, name: r.name, prefix: r.prefix, scopes: JSON.parse(r.scopes), rate_limit_per_minute: Number(r.rate_limit_per_minute),
    expires_at: r.expires_at ?? null, revoked_at: r.revoked_at ?? null, last_used_at: r.last_used_at ?? null, state, created_by: r.created_by, created_at: r.created_at,
  };
}

/** Makes a key: the secret is returned once; only its hash is stored. */
export async function createKey(db: Db, k: { tenantId: string; name: string; scopes: Scope[]; ratePerMinute: number; expiresAt: string | null; createdBy: string; now: Date }) {
  const secret = `pk_${crypto.randomBytes(32).toString('base64url')}`;
  const row = {
    id: crypto.randomUUID(), tenant_id: k.tenantId, name: k.name, prefix: secret.slice(0, 10), key_hash: hashKey(secret), scopes: JSON.stringify([...new Set(k.scopes)].sort()),
    rate_limit_per_minute: k.ratePerMinute, expires_at: k.expiresAt, revoked_at: null, last_used_at: null, created_by: k.createdBy, created_at: k.now.toISOString(),
  };
  await db('api_keys').insert(row);
  return { key: secret, view: keyView(row, k.now) };
}

/** The API key a request presents: `X-API-Key: pk_...` or `Authorization: Bearer pk_...`. */
function presented(req: Request): string | null {
  const own = req.headers['x-api-key'];
  if (typeof own === 'string' && own.trim()) return own.trim();
  const auth = req.headers.authorization;
  const m = typeof auth === 'string' ? /^bearer\s+(pk_\S+)\s*$/i.exec(auth) : null;
  return m ? m[1] : null;
}

/** The scope a request needs: execute for the public run, read for reads, write otherwise. */
function neededScope(req: Request): Scope {
  const route = (req.res?.locals.route as string | undefined) ?? '';
  if (route.replace(/^\/api/, '') === EXECUTE_ROUTE) return 'execute';
  return req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'write';
}

/**
 * Makes API keys credentials of the host (core auth's authenticator extension point). A key
 * acts in its tenant with the member role when it has `write` or `execute`, viewer otherwise,
 * and only on routes its scopes open (so an execute-only key can call nothing else). Each key has its own per-minute budget (per host, fixed window).
 */
export const KEY_CACHE_MAX = 10_000;

export function registerKeyAuth(auth: AuthService, db: Db, now: () => Date): { entries: () => number } {
  // Per key: this minute's count, and when last_used_at was written; the oldest go first past the bound.
  const windows = new Map<string, { window: number; count: number }>();
  const touched = new Map<string, number>();
  const bounded = <V>(m: Map<string, V>, k: string, v: V) => {
    m.delete(k);
    if (m.size >= KEY_CACHE_MAX) m.delete(m.keys().next().value!);
    m.set(k, v);
  };
  auth.addAuthenticator((req) => {
    const secret = presented(req);
    return secret ? resolve(secret, req) : null;
  });
  const resolve = async (secret: string, req: Request): Promise<Caller> => {
    const row = await db('api_keys').where({ key_hash: hashKey(secret) }).first();
    if (!row || row.revoked_at) throw new Unauthorized('Invalid or revoked API key');
    const at = now();
    if (row.expires_at && row.expires_at <= at.toISOString()) throw new Unauthorized('API key expired');
    const scopes = JSON.parse(row.scopes) as Scope[];
    const needed = neededScope(req);
    if (!scopes.includes(needed)) throw new Forbidden(`This API key lacks the "${needed}" scope`, 'API_KEY_SCOPE');
    const limit = Number(row.rate_limit_per_minute);
    const window = Math.floor(at.getTime() / 60_000);
    const w = windows.get(row.id);
    const cur = w && w.window === window ? w : { window, count: 0 };
    cur.count += 1;
    bounded(windows, row.id, cur);
    const reset = (window + 1) * 60;
    // Own header names: X-RateLimit-* carry the tenant's budget, which applies too.
    const res = req.res;
    res?.setHeader('X-Key-RateLimit-Limit', String(limit));
    res?.setHeader('X-Key-RateLimit-Remaining', String(Math.max(0, limit - cur.count)));
    res?.setHeader('X-Key-RateLimit-Reset', String(reset));
    if (cur.count > limit) throw new TooManyRequests(`API key rate limit exceeded: ${limit} requests a minute`, reset - at.getTime() / 1000);
    if ((touched.get(row.id) ?? 0) < at.getTime() - 60_000) {
      bounded(touched, row.id, at.getTime());
      await db('api_keys').where({ id: row.id }).update({ last_used_at: at.toISOString() });
    }
    return { kind: 'api_key', id: row.id, tenantId: row.tenant_id, role: scopes.includes('write') || scopes.includes('execute') ? 'member' : 'viewer', scopes };
  };
  return { entries: () => windows.size };
}
