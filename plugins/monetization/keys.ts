import crypto from 'node:crypto';
import type { Request } from 'express';
import { z } from 'zod';
import type { AuthService } from '../../core/auth/service';
import type { Db } from '../../core/db';
import { Forbidden, TooManyRequests, Unauthorized } from '../../core/errors';
import type { Caller } from '../../core/roles';
import type { RateLimiter } from '../../core/limits';

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
  // Only API keys: an X-API-Key of another kind (an observability ingest key, pcik_) is not ours to refuse.
  if (typeof own === 'string' && own.trim().startsWith('pk_')) return own.trim();
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
 * and only on routes its scopes open (so an execute-only key can call nothing else). Each key has its own budget in core's rate limits (shared across hosts through Redis).
 */
export const KEY_CACHE_MAX = 10_000;

export function registerKeyAuth(auth: AuthService, db: Db, limits: RateLimiter, now: () => Date): { entries: () => number } {
  // Per key: when last_used_at was written; the oldest go first past the bound.
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
      // The key's budget lives with the tenants' (core's limits: Redis when configured, so every
    // host counts against one budget), over the same window, scaled from its per-minute rate.
    const limit = Math.max(1, Math.round((Number(row.rate_limit_per_minute) * limits.window) / 60));
    const take = await limits.takeNamed(`key:${row.id}`, limit);
    const reset = Math.ceil(take.resetAt / 1000);
    // Own header names: X-RateLimit-* carry the tenant's budget, which applies too.
    const res = req.res;
    res?.setHeader('X-Key-RateLimit-Limit', String(limit));
    res?.setHeader('X-Key-RateLimit-Remaining', String(take.remaining));
    res?.setHeader('X-Key-RateLimit-Reset', String(reset));
    if (!take.allowed) throw new TooManyRequests(`API key rate limit exceeded: ${limit} requests in ${limits.window} s`, (take.resetAt - Date.now()) / 1000);
    if ((touched.get(row.id) ?? 0) < at.getTime() - 60_000) {
      bounded(touched, row.id, at.getTime());
      await db('api_keys').where({ id: row.id }).update({ last_used_at: at.toISOString() });
    }
    return { kind: 'api_key', id: row.id, tenantId: row.tenant_id, role: scopes.includes('write') || scopes.includes('execute') ? 'member' : 'viewer', scopes };
  };
  return { entries: () => touched.size };
}
