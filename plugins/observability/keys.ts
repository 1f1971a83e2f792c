import { pageOf } from '../../core/pagination';
import crypto from 'node:crypto';
import type { Request } from 'express';
import { z } from 'zod';
import { nowIso, type Db, type Migration } from '../../core/db';
import { Conflict, Forbidden, NotFound, Unauthorized } from '../../core/errors';
import type { RouteMaker } from '../../core/plugin';
import type { Deps } from './deps';
import type { Caller } from '../../core/roles';
import { scopeTenant } from '../../core/contracts/telemetry';

// Ingest keys: long-lived credentials for pipelines (which are not users). A key belongs to
// one tenant, is shown once at creation, is stored only as its SHA-256, may call only the
// ingest endpoints, and stops working the moment it is revoked.

export const KEY_PREFIX = 'pcik_';
const INGEST_ROUTES = '/observability/v1/ingest/';
/** The OTLP receiver's export routes (plugin otlp): pipelines send there with the same keys. */
const OTLP_EXPORTS = new Set(['/otlp/v1/traces', '/otlp/v1/metrics', '/otlp/v1/logs', '/v1/traces', '/v1/metrics', '/v1/logs']);

export const keyMigrations: Migration[] = [
  {
    name: '001_ingest_keys',
    async up(db) {
      await db.schema.createTable('ingest_keys', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('name', 128).notNullable();
        t.string('key_hash', 64).notNullable().unique();
        t.string('hint', 16).notNullable();
        t.string('created_by', 64).notNullable();
        t.string('created_at', 32).notNullable();
        t.string('revoked_at', 32);
        t.string('last_used_at', 32);
        t.index(['tenant_id', 'created_at']);
      });
    },
  },
];

const hash = (key: string) => crypto.createHash('sha256').update(key, 'utf8').digest('hex');

const keySchema = z.object({
  id: z.string(),
  tenant_id: z.string(),
  name: z.string(),
  hint: z.string(),
  created_by: z.string(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
});
type KeyRow = z.infer<typeof keySchema> & { key_hash: string };
const publicKey = ({ key_hash: _h, ...rest }: KeyRow) => rest;

/**
 * The key of a request: `X-Ingest-Key: pcik_...`, `X-API-Key: pcik_...` (what collectors'
 * exporters are usually configured with) or `Authorization: Bearer pcik_...`.
 */
function presentedKey(headers: Record<string, string | string[] | undefined>): string | null {
  const own = headers['x-ingest-key'];
  if (typeof own === 'string' && own) return own.trim();
  const api = headers['x-api-key'];
  if (typeof api === 'string' && api.trim().startsWith(KEY_PREFIX)) return api.trim();
  const auth = headers.authorization;
  const m = typeof auth === 'string' ? /^bearer\s+(pcik_\S+)$/i.exec(auth.trim()) : null;
  return m ? m[1] : null;
}

/** Registers the ingest-key authenticator with core auth. */
export function registerAuthenticator(services: Deps): void {
  const db = services.db;
  // Last-used times are written at most once a minute per key, to keep ingest write-light.
  const touched = new Map<string, number>();
  // Asked on every request: answers synchronously when no ingest key is presented.
  services.auth.addAuthenticator((req) => {
    const key = presentedKey(req.headers);
    return key ? keyCaller(key, req) : null;
  });
  const keyCaller = async (key: string, req: Request): Promise<Caller> => {
    const row = (await db('ingest_keys').where({ key_hash: hash(key) }).first()) as KeyRow | undefined;
    if (!row || row.revoked_at) throw new Unauthorized('Invalid or revoked ingest key');
    const route = (req.res?.locals.route as string | undefined) ?? '';
    if (!route.startsWith(INGEST_ROUTES) && !OTLP_EXPORTS.has(route)) throw new Forbidden('An ingest key may only call the ingest and OTLP export endpoints');
    const now = Date.now();
    if ((touched.get(row.id) ?? 0) < now - 60_000) {
      touched.set(row.id, now);
      await db('ingest_keys').where({ id: row.id }).update({ last_used_at: nowIso() });
    }
    const caller: Caller = { kind: 'ingest_key', id: row.id, tenantId: row.tenant_id, role: 'member' };
    return caller;
  };
}

async function tenantExists(db: Db, id: string): Promise<boolean> {
  return Boolean(await db('tenants').where({ id }).first('id'));
}

export const keyRoutes = (route: RouteMaker<Deps>) => [
  route({
    method: 'post',
    path: '/v1/ingest-keys',
    summary: 'Create an ingest key for a pipeline (the key is shown only in this answer)',
    description: 'Operators create keys for their own tenant; admins may name another tenant with `tenant_id`.',
    access: 'operator',
    body: z.strictObject({ name: z.string().min(1).max(128), tenant_id: z.string().min(1).max(64).optional() }),
    response: keySchema.extend({ key: z.string() }),
    status: 201,
    errors: [403, 404],
    handler: async ({ body, caller, services }) => {
      const tenantId = scopeTenant(caller!, body.tenant_id);
      if (!(await tenantExists(services.db, tenantId))) throw new NotFound(`No tenant ${tenantId}`);
      const key = KEY_PREFIX + crypto.randomBytes(24).toString('base64url');
      const row: KeyRow = {
        id: crypto.randomUUID(),
        tenant_id: tenantId,
        name: body.name,
        key_hash: hash(key),
        hint: key.slice(0, KEY_PREFIX.length + 4),
        created_by: caller!.id,
        created_at: nowIso(),
        revoked_at: null,
        last_used_at: null,
      };
      await services.db('ingest_keys').insert(row);
      await services.actions.record({
        source: 'manual', actor: caller!.id, action: 'create_ingest_key', target_type: 'ingest_key', target_id: row.id,
        result: 'succeeded', tenant_id: tenantId, detail: { name: row.name },
      });
      return { ...publicKey(row), key };
    },
  }),
  route({
    method: 'get',
    path: '/v1/ingest-keys',
    summary: 'List the ingest keys of a tenant (never the keys themselves)',
    access: 'operator',
    query: z.object({
      tenant_id: z.string().min(1).max(64).optional(),
      include_revoked: z.enum(['true', 'false']).default('true'),
      limit: z.coerce.number().int().min(1).max(500).default(100),
      cursor: z.string().max(512).optional(),
    }),
    response: z.object({ keys: z.array(keySchema), next_cursor: z.string().nullable() }),
    errors: [403],
    handler: async ({ query, caller, services }) => {
      const tenantId = scopeTenant(caller!, query.tenant_id);
      const q = services.db('ingest_keys').where({ tenant_id: tenantId });
      if (query.include_revoked === 'false') q.whereNull('revoked_at');
      const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
      return { keys: (items as KeyRow[]).map(publicKey), next_cursor };
    },
  }),
  route({
    method: 'delete',
    path: '/v1/ingest-keys/{key_id}',
    summary: 'Revoke an ingest key (it stops working at once; the record stays)',
    access: 'operator',
    params: z.object({ key_id: z.uuid() }),
    response: keySchema,
    errors: [404, 409],
    handler: async ({ params, caller, services }) => {
      const q = services.db('ingest_keys').where({ id: params.key_id });
      // Admins may revoke any tenant's key; everyone else only their own tenant's.
      if (!(caller!.kind === 'user' && caller!.role === 'admin')) q.andWhere({ tenant_id: caller!.tenantId });
      const row = (await q.first()) as KeyRow | undefined;
      if (!row) throw new NotFound(`No ingest key ${params.key_id}`);
      if (row.revoked_at) throw new Conflict(`Ingest key ${params.key_id} was already revoked at ${row.revoked_at}`);
      const revokedAt = nowIso();
      const changed = await services.db('ingest_keys').where({ id: row.id }).whereNull('revoked_at').update({ revoked_at: revokedAt });
      if (!changed) throw new Conflict(`Ingest key ${params.key_id} was already revoked`);
      await services.actions.record({
        source: 'manual', actor: caller!.id, action: 'revoke_ingest_key', target_type: 'ingest_key', target_id: row.id,
        result: 'succeeded', tenant_id: row.tenant_id, detail: { name: row.name },
      });
      return publicKey({ ...row, revoked_at: revokedAt });
    },
  }),
];
