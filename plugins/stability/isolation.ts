import crypto from 'node:crypto';
import type { AuthService } from '../../core/auth/service';
import type { AccountsService } from '../../core/contracts/accounts';
import type { Db } from '../../core/db';
import { callSelf, type LoopbackReply } from '../../core/http/loopback';
import { ROLES, type Role } from '../../core/roles';
import { sample } from './sample';

type Json = Record<string, any>;
export type AttemptKind = 'bola' | 'bola_list' | 'bfla' | 'forged_token' | 'id_guess';

export interface Attempt {
  kind: AttemptKind;
  method: string;
  path: string;
  as: string;
  status: number;
  /** leak: another tenant's object or a function above the role answered; server_error: a 5xx. */
  verdict: 'refused' | 'leak' | 'server_error' | 'answers_any_id';
  evidence: string | null;
}

interface Op {
  method: string;
  path: string;
  access: string;
  params: string[];
  body: Json | undefined;
  creates: boolean;
}

// Routes the simulation leaves alone: its own group (it would recurse), sessions (a probe must
// not log anyone out), and public intake routes that count submissions per address.
const SKIP = [/^\/stability\//, /^\/auth\//, /^\/contact\//, /^\/webhooks\//];
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** A body schema that is a reference to a component (kernel task inputs), looked up. */
function resolved(doc: Json, schema: Json | undefined): Json | undefined {
  const ref = typeof schema?.$ref === 'string' ? (schema.$ref as string) : null;
  return ref?.startsWith('#/components/schemas/') ? (doc.components?.schemas?.[ref.slice('#/components/schemas/'.length)] as Json | undefined) : schema;
}

function opsOf(doc: Json): Op[] {
  const out: Op[] = [];
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Json)) {
    if (SKIP.some((r) => r.test(path))) continue;
    for (const [method, op] of Object.entries(item as Json)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const content = op.requestBody?.content ?? {};
      const body = content['application/json']?.schema as Json | undefined;
      out.push({ method: method.toUpperCase(), path, access: op['x-access'] ?? 'authenticated', params: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!), body: resolved(doc, body), creates: Boolean(op.responses?.['201']) });
    }
  }
  return out;
}

const fill = (path: string, values: Record<string, string>) => path.replace(/\{([^}]+)\}/g, (_, n: string) => encodeURIComponent(values[n] ?? 'x'));
const text = (r: LoopbackReply) => (typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
const ok = (s: number) => s >= 200 && s < 300;

/** A token that looks like ours but is signed with another key: it must never be accepted. */
function forged(tenantId: string, userId: string): string {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const head = b64({ alg: 'HS256', typ: 'JWT' });
  const body = b64({ sub: userId, tenant_id: tenantId, role: 'admin', jti: crypto.randomUUID(), iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 600 });
  const sig = crypto.createHmac('sha256', 'not-the-platform-secret').update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${sig}`;
}

async function scratchTenant(db: Db, auth: AuthService, accounts: AccountsService, name: string, roles: Role[]) {
  await db('tenants').insert({ id: name, name: `isolation scratch ${name}`, plan: 'enterprise', domains: '[]', created_at: new Date().toISOString() });
  const tokens = {} as Record<Role, { token: string; id: string }>;
  for (const role of roles) {
    const email = `${role}@${name}.isolation.test`;
    const u = await accounts.createUser({ tenantId: name, email, name: `${role} of ${name}`, role, password: crypto.randomBytes(24).toString('base64url') });
    tokens[role] = { token: auth.sign({ id: u.id, tenantId: name, role, email }, 900).token, id: u.id };
  }
  return tokens;
}

/**
 * Deletes the scratch tenants and their users, so that they neither sign in nor count as
 * sign-ups; the objects they made stay, owned by a tenant nobody belongs to (the report names them).
 */
async function removeScratch(db: Db, tenants: string[]): Promise<boolean> {
  try {
    await db.transaction(async (trx) => {
      await trx('refresh_tokens').whereIn('tenant_id', tenants).delete();
      await trx('users').whereIn('tenant_id', tenants).delete();
      await trx('tenants').whereIn('id', tenants).delete();
    });
    return true;
  } catch {
    return false;
  }
}

/**
 * Two scratch tenants; tenant A creates what it can through every creating route and lists
 * what it sees; tenant B then tries every route with A's ids (BOLA), every list for A's ids,
 * every route above its role (BFLA), forged tokens, and guessed ids, all through real HTTP.
 */
export async function attack(db: Db, auth: AuthService, accounts: AccountsService, base: string, onProgress: (done: number) => void) {
  const tag = crypto.randomBytes(4).toString('hex');
  const a = { id: `iso-a-${tag}`, ...(await scratchTenant(db, auth, accounts, `iso-a-${tag}`, ['viewer', 'member', 'operator'])) };
  const b = { id: `iso-b-${tag}`, ...(await scratchTenant(db, auth, accounts, `iso-b-${tag}`, ['viewer', 'operator'])) };
  const doc = (await callSelf(base, 'GET', '/openapi.json')).body as Json;
  const ops = opsOf(doc);
  const attempts: Attempt[] = [];
  const owned = new Map<string, string>([[a.id, 'tenant id']]);
  const record = (x: Attempt) => {
    attempts.push(x);
    if (attempts.length % 50 === 0) onProgress(attempts.length);
  };

  // 1. Tenant A makes objects (member role: tenant writes only) and reads its lists.
  for (const op of ops.filter((o) => o.creates && !o.params.length && ['authenticated', 'viewer', 'member'].includes(o.access))) {
    const r = await callSelf(base, op.method, op.path, { token: a.member.token, body: op.body ? sample(op.body) : undefined });
    if (ok(r.status)) for (const id of text(r).match(UUID) ?? []) owned.set(id, `${op.method} ${op.path}`);
  }
  const lists = ops.filter((o) => o.method === 'GET' && !o.params.length && o.access !== 'public' && o.access !== 'admin');
  for (const op of lists) {
    const [ra, rb] = [await callSelf(base, 'GET', op.path, { token: a.operator.token }), await callSelf(base, 'GET', op.path, { token: b.operator.token })];
    const shared = new Set(text(rb).match(UUID) ?? []);
    // An id B sees too is shared (platform-wide), not A's.
    if (ok(ra.status)) for (const id of text(ra).match(UUID) ?? []) if (!shared.has(id) && !owned.has(id)) owned.set(id, `GET ${op.path}`);
  }
  const ownedIds = [...owned.keys()];

  // 2. BOLA by listing: nothing of A's in any of B's lists. First, before B has sent A's ids
  // anywhere (B's own records of its probes would echo them back).
  for (const op of lists) {
    const r = await callSelf(base, 'GET', op.path, { token: b.operator.token });
    const seen = ownedIds.filter((id) => text(r).includes(id));
    const body = text(r);
    const at = seen.length ? body.indexOf(seen[0]!) : -1;
    record({ kind: 'bola_list', method: 'GET', path: op.path, as: `${b.id}/operator`, status: r.status, verdict: ok(r.status) && seen.length ? 'leak' : r.status >= 500 ? 'server_error' : 'refused', evidence: seen.length ? `A's ids ${seen.slice(0, 3).join(', ')} (${seen.map((id) => owned.get(id)).slice(0, 3).join('; ')}) in: …${body.slice(Math.max(0, at - 300), at + 100)}…` : null });
  }

  // 3. BOLA: B (operator, the highest tenant role) names A's objects in every parameterised route.
  for (const op of ops.filter((o) => o.params.length && o.access !== 'public')) {
    const seg = op.path.split('/')[1];
    const candidates = [...owned.entries()].sort(([, x], [, y]) => Number(y.split(' ')[1]?.split('/')[1] === seg) - Number(x.split(' ')[1]?.split('/')[1] === seg)).map(([id]) => id);
    const picks = op.params.includes('tenant_id') ? [a.id] : candidates.filter((id) => id !== a.id).slice(0, 3);
    for (const id of picks) {
      const path = fill(op.path, Object.fromEntries(op.params.map((p) => [p, id])));
      const r = await callSelf(base, op.method, path, { token: b.operator.token, body: op.body ? sample(op.body) : op.method === 'GET' ? undefined : {} });
      let verdict: Attempt['verdict'] = r.status >= 500 ? 'server_error' : 'refused';
      let evidence: string | null = r.status >= 500 ? text(r).slice(0, 200) : null;
      if (ok(r.status)) {
        // Same route with an id nobody owns: if that answers too, the route is not per object.
        const control = await callSelf(base, op.method, fill(op.path, Object.fromEntries(op.params.map((p) => [p, p === 'tenant_id' ? b.id : crypto.randomUUID()]))), { token: b.operator.token, body: op.body ? sample(op.body) : op.method === 'GET' ? undefined : {} });
        verdict = ok(control.status) && !text(r).includes(id) ? 'answers_any_id' : 'leak';
        evidence = `${r.status} for ${owned.get(id)} object ${id}: ${text(r).slice(0, 300)}`;
      }
      record({ kind: 'bola', method: op.method, path, as: `${b.id}/operator`, status: r.status, verdict, evidence });
    }
    // ID guessing: a near miss of A's id, and small integers.
    for (const guess of [picks[0] ? picks[0].slice(0, -1) + (picks[0].endsWith('0') ? '1' : '0') : null, '1'].filter(Boolean) as string[]) {
      const path = fill(op.path, Object.fromEntries(op.params.map((p) => [p, guess])));
      const r = await callSelf(base, op.method, path, { token: b.operator.token, body: op.body ? sample(op.body) : op.method === 'GET' ? undefined : {} });
      const leaked = ok(r.status) && ownedIds.some((id) => text(r).includes(id));
      record({ kind: 'id_guess', method: op.method, path, as: `${b.id}/operator`, status: r.status, verdict: leaked ? 'leak' : r.status >= 500 ? 'server_error' : 'refused', evidence: leaked || r.status >= 500 ? text(r).slice(0, 300) : null });
    }
  }

  // 4. BFLA: B's viewer on every write and every route above viewer; a forged token everywhere.
  for (const op of ops.filter((o) => o.access !== 'public')) {
    const path = fill(op.path, Object.fromEntries(op.params.map((p) => [p, p === 'tenant_id' ? b.id : crypto.randomUUID()])));
    const body = op.body ? sample(op.body) : op.method === 'GET' ? undefined : {};
    const needs = ROLES.includes(op.access as Role) ? (op.access as Role) : 'viewer';
    if (ROLES.indexOf(needs) > 0) {
      const r = await callSelf(base, op.method, path, { token: b.viewer.token, body });
      record({ kind: 'bfla', method: op.method, path, as: `${b.id}/viewer`, status: r.status, verdict: ok(r.status) ? 'leak' : r.status >= 500 ? 'server_error' : 'refused', evidence: ok(r.status) ? `${op.access} route answered a viewer: ${text(r).slice(0, 200)}` : null });
    }
    const f = await callSelf(base, op.method, path, { token: forged(a.id, a.operator.id), body });
    record({ kind: 'forged_token', method: op.method, path, as: 'forged admin token', status: f.status, verdict: f.status === 401 ? 'refused' : ok(f.status) ? 'leak' : f.status >= 500 ? 'server_error' : 'refused', evidence: f.status === 401 ? null : `${f.status}: ${text(f).slice(0, 200)}` });
  }

  const removed = await removeScratch(db, [a.id, b.id]);
  const leaks = attempts.filter((x) => x.verdict === 'leak');
  const serverErrors = attempts.filter((x) => x.verdict === 'server_error');
  const byKind = Object.fromEntries((['bola', 'bola_list', 'bfla', 'forged_token', 'id_guess'] as const).map((k) => [k, attempts.filter((x) => x.kind === k).length]));
  return {
    tenants: { victim: a.id, attacker: b.id, removed_afterwards: removed },
    routes_tried: ops.length,
    routes_skipped: SKIP.map(String),
    victim_objects: ownedIds.length,
    attempts_total: attempts.length,
    attempts_by_kind: byKind,
    leaks: leaks.length,
    server_errors: serverErrors.length,
    passed: leaks.length === 0,
    findings: [...leaks, ...serverErrors],
    attempts,
    method: "two scratch tenants; the victim creates objects through every creating route (member role, bodies sampled from the route's schema) and reads its lists; the attacker (operator) names them in every parameterised route, looks for them in every list, guesses neighbouring ids, tries every route above viewer as a viewer, and every route with a forged token; a 2xx that shows the victim's object is a leak",
  };
}
