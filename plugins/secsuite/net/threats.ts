import type { Severity } from '../../../core/contracts/security';
import { isNet } from '../cidr';
import type { Deps } from '../deps';
import { zonesOf, type Zone } from './policy';

const RANK: Record<Severity, number> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };
const WEEK = 7 * 86_400_000;

export interface Threat {
  id: string;
  kind: 'finding' | 'event';
  category: string;
  severity: Severity;
  subject: string | null;
  address: string | null;
  zones: string[];
  isolated: boolean;
  created_at: string;
}

/**
 * A tenant's current threats: its open findings, and its network, endpoint and cloud
 * security events of medium severity or worse from the last week, each placed in the zones
 * its address belongs to. Endpoint events name a device; its last known address is used.
 */
export async function threats(d: Deps, tenantId: string, zs: Zone[]): Promise<Threat[]> {
  const since = new Date(d.clock.now().getTime() - WEEK).toISOString();
  const devices = new Map((await d.db('endpointsec_devices').where({ tenant_id: tenantId }).whereNotNull('address').select('device_id', 'address')).map((r) => [r.device_id as string, r.address as string]));
  const place = (address: string | null) => {
    const inside = address ? zonesOf(zs, address) : [];
    return { address, zones: inside.map((z) => z.name), isolated: inside.some((z) => z.kind === 'quarantine') };
  };
  const out: Threat[] = [];
  for (const f of await d.sec.activeFindings(tenantId, 200)) {
    const address = isNet(f.subject) ? f.subject : devices.get(f.subject) ?? null;
    out.push({ id: f.id, kind: 'finding', category: f.rule_id, severity: f.severity, subject: f.subject, created_at: f.created_at, ...place(address) });
  }
  for (const prefix of ['netsec.', 'endpoint.', 'cloudsec.']) {
    for (const e of await d.sec.recentEvents(tenantId, prefix, since, 500)) {
      if (RANK[e.severity] < RANK.medium) continue;
      const address = e.address ?? (e.actor ? devices.get(e.actor) ?? (isNet(e.actor) ? e.actor : null) : null);
      out.push({ id: e.id, kind: 'event', category: e.category, severity: e.severity, subject: e.actor, created_at: e.created_at, ...place(address) });
    }
  }
  return out.sort((a, b) => RANK[b.severity] - RANK[a.severity] || b.created_at.localeCompare(a.created_at));
}

export function atLeast(s: Severity, min: Severity): boolean {
  return RANK[s] >= RANK[min];
}
