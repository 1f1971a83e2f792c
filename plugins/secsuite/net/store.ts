import crypto from 'node:crypto';
import type { Db } from '../../../core/db';
import { Conflict, NotFound } from '../../../core/errors';
import { parseNet } from '../cidr';
import type { Policy, Zone } from './policy';

type Row = Record<string, any>;

export function zoneOf(r: Row) {
  return { id: r.id as string, tenant_id: r.tenant_id as string, name: r.name as string, description: r.description as string, kind: r.kind as Zone['kind'], members: JSON.parse(r.members) as Zone['members'], created_at: r.created_at as string, updated_at: r.updated_at as string };
}
export function policyOf(r: Row): Policy & { created_at: string; updated_at: string } {
  return { ...JSON.parse(r.body), id: r.id, name: r.name, priority: Number(r.priority), created_at: r.created_at, updated_at: r.updated_at };
}

export async function zones(db: Db, tenantId: string) {
  return (await db('netsec_zones').where({ tenant_id: tenantId }).orderBy('name')).map(zoneOf);
}

export async function zone(db: Db, tenantId: string, id: string) {
  const r = await db('netsec_zones').where({ tenant_id: tenantId, id }).first();
  if (!r) throw new NotFound('Zone not found', 'ZONE_NOT_FOUND');
  return zoneOf(r);
}

/** The canonical text of a member (a host or a CIDR); null when it is neither. */
export function memberText(v: string): string | null {
  const n = parseNet(v);
  if (!n || v.trim().toLowerCase() === 'any') return null;
  const max = n.addr.kind() === 'ipv4' ? 32 : 128;
  return n.bits === max ? n.addr.toString() : `${n.addr.toString()}/${n.bits}`;
}

export async function createZone(db: Db, tenantId: string, z: { name: string; description: string; kind: Zone['kind']; members: string[] }, now: string) {
  if (await db('netsec_zones').where({ tenant_id: tenantId, name: z.name }).first('id')) throw new Conflict(`A zone named "${z.name}" exists`, 'ZONE_EXISTS');
  const row = { id: crypto.randomUUID(), tenant_id: tenantId, name: z.name, description: z.description, kind: z.kind, members: JSON.stringify(z.members.map((value) => ({ value, added_at: now }))), created_at: now, updated_at: now };
  await db('netsec_zones').insert(row);
  return zoneOf(row);
}

export async function saveMembers(db: Db, tenantId: string, id: string, members: Zone['members'], now: string) {
  await db('netsec_zones').where({ tenant_id: tenantId, id }).update({ members: JSON.stringify(members), updated_at: now });
}

/** The quarantine zone of a tenant (made on first use). */
export async function quarantineZone(db: Db, tenantId: string, now: string) {
  const r = await db('netsec_zones').where({ tenant_id: tenantId, kind: 'quarantine' }).orderBy('created_at').first();
  if (r) return zoneOf(r);
  return createZone(db, tenantId, { name: 'quarantine', description: 'Isolated members and blocked addresses: every flow to or from them is denied', kind: 'quarantine', members: [] }, now);
}

export async function drafts(db: Db, tenantId: string) {
  return (await db('netsec_policies').where({ tenant_id: tenantId }).orderBy([{ column: 'priority' }, { column: 'name' }])).map(policyOf);
}

export async function activeSet(db: Db, tenantId: string): Promise<{ version: number; policies: Policy[]; created_at: string } | null> {
  const r = await db('netsec_policy_sets').where({ tenant_id: tenantId, active: true }).first();
  return r ? { version: Number(r.version), policies: JSON.parse(r.policies), created_at: r.created_at } : null;
}

/** Moves an address into the quarantine zone: out of the zones that list it exactly. */
export async function isolateAddress(db: Db, tenantId: string, address: string, now: string) {
  const all = await zones(db, tenantId);
  const q = await quarantineZone(db, tenantId, now);
  if (q.members.some((m) => m.value === address)) throw new Conflict(`${address} is already in quarantine zone ${q.name}`, 'ALREADY_ISOLATED');
  const from: string[] = [];
  for (const z of all.filter((x) => x.kind !== 'quarantine' && x.members.some((m) => m.value === address))) {
    await saveMembers(db, tenantId, z.id, z.members.filter((m) => m.value !== address), now);
    from.push(z.name);
  }
  await saveMembers(db, tenantId, q.id, [...q.members, { value: address, added_at: now }], now);
  return { from_zones: from, quarantine_zone: q.name };
}
