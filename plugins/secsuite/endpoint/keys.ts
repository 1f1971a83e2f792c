import crypto from 'node:crypto';
import type { Request } from 'express';
import type { Db } from '../../../core/db';
import { Forbidden, Unauthorized } from '../../../core/errors';
import { roleAtLeast, type Caller } from '../../../core/roles';

export const sha256 = (s: string) => crypto.createHash('sha256').update(s, 'utf8').digest('hex');

/** Who pushes endpoint data: a member's token, or an integration key of a tenant. */
export interface Pusher {
  tenantId: string;
  /** The user id, or `key:<id>`. */
  actor: string;
  keyId: string | null;
}

/**
 * Integration keys are stored as their SHA-256. A request carries the key itself
 * (`X-Integration-Key`), or its id (`X-Integration-Key-Id`) and an HMAC-SHA256 of the raw
 * body (`X-Signature: sha256=<hex>`) keyed with the key's SHA-256 hex digest, so that the
 * key never travels. A member's bearer token is accepted too.
 */
export async function pusherOf(req: Request, caller: Caller | null, db: Db, now: string): Promise<Pusher> {
  if (caller) {
    if (caller.kind !== 'user' || !roleAtLeast(caller.role, 'member')) throw new Forbidden('Pushing endpoint data needs the member role or an integration key', 'ROLE');
    return { tenantId: caller.tenantId, actor: caller.id, keyId: null };
  }
  const key = header(req, 'x-integration-key');
  const keyId = header(req, 'x-integration-key-id');
  let row: { id: string; tenant_id: string; key_hash: string; revoked_at: string | null } | undefined;
  if (key) {
    row = await db('endpointsec_keys').where({ key_hash: sha256(key) }).first();
  } else if (keyId) {
    row = await db('endpointsec_keys').where({ id: keyId }).first();
    const sig = /^sha256=([0-9a-f]{64})$/i.exec(header(req, 'x-signature') ?? '')?.[1];
    const raw = (req as Request & { rawBody?: string }).rawBody;
    if (row && (!sig || raw === undefined || !safeEqual(crypto.createHmac('sha256', row.key_hash).update(raw, 'utf8').digest('hex'), sig.toLowerCase()))) {
      await db('endpointsec_keys').where({ id: row.id }).increment('refused_uses', 1);
      throw new Unauthorized('Bad or missing X-Signature (sha256=<hex HMAC of the raw JSON body>)');
    }
  } else {
    throw new Unauthorized('A bearer token or an integration key (X-Integration-Key, or X-Integration-Key-Id with X-Signature) is required');
  }
  if (!row || row.revoked_at) throw new Unauthorized('Unknown or revoked integration key');
  await db('endpointsec_keys').where({ id: row.id }).update({ last_used_at: now });
  return { tenantId: row.tenant_id, actor: `key:${row.id}`, keyId: row.id };
}

function header(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function safeEqual(a: string, b: string): boolean {
  return a.length === b.length && crypto.timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

export function newKey() {
  const key = `esk_${crypto.randomBytes(24).toString('base64url')}`;
  return { key, hash: sha256(key), hint: key.slice(-6) };
}
