import { covers, parseNet } from '../cidr';

export interface Member {
  value: string;
  added_at: string;
}

export interface Zone {
  id: string;
  name: string;
  kind: 'standard' | 'quarantine' | 'carrier';
  members: Member[];
}

export interface Policy {
  id: string;
  name: string;
  source_zone: string;
  destination_zone: string;
  /** `any`, single ports (`443`) or ranges (`1000-2000`). */
  ports: string[];
  protocol: 'tcp' | 'udp' | 'icmp' | 'any';
  action: 'allow' | 'deny';
  priority: number;
}

export interface Flow {
  src_ip: string;
  dst_ip: string;
  dst_port?: number;
  protocol: 'tcp' | 'udp' | 'icmp';
}

export interface Step {
  policy_id: string | null;
  name: string;
  priority: number | null;
  matched: boolean;
  /** Why it did not match (the first condition that failed), or `matched`. */
  reason: string;
}

export interface Decision {
  action: 'allow' | 'deny';
  matched_policy: Policy | null;
  source_zones: string[];
  destination_zones: string[];
  path: Step[];
}

/** A port spec: `any`, a port or an inclusive range. */
export function portRange(spec: string): [number, number] | null {
  if (spec === 'any') return [0, 65535];
  const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(spec);
  if (!m) return null;
  const lo = Number(m[1]);
  const hi = m[2] === undefined ? lo : Number(m[2]);
  return lo <= hi && hi <= 65535 ? [lo, hi] : null;
}

/** The zones (by id) whose members hold an address. */
export function zonesOf(zones: Zone[], ip: string): Zone[] {
  const addr = parseNet(ip);
  if (!addr) return [];
  return zones.filter((z) => z.members.some((m) => {
    const n = parseNet(m.value);
    return !!n && covers(n, addr);
  }));
}

const portMatches = (p: Policy, port?: number) =>
  p.ports.some((s) => {
    const r = portRange(s);
    if (!r) return false;
    if (port === undefined) return r[0] === 0 && r[1] === 65535;
    return port >= r[0] && port <= r[1];
  });

/**
 * First-match evaluation of a flow: a quarantined address (source or destination in a
 * quarantine zone) is denied before any policy; then policies in priority order (lower
 * first, ties by name); no match is the implicit deny. Every policy looked at is a step
 * of the path, with the first condition that failed.
 */
export function evaluate(zones: Zone[], policies: Policy[], flow: Flow): Decision {
  const src = zonesOf(zones, flow.src_ip);
  const dst = zonesOf(zones, flow.dst_ip);
  const base = { source_zones: src.map((z) => z.name), destination_zones: dst.map((z) => z.name) };
  const quarantined = [...src, ...dst].find((z) => z.kind === 'quarantine');
  if (quarantined) {
    return { ...base, action: 'deny', matched_policy: null, path: [{ policy_id: null, name: 'quarantine', priority: null, matched: true, reason: `an endpoint of the flow is in quarantine zone ${quarantined.name}` }] };
  }
  const srcIds = new Set(src.map((z) => z.id));
  const dstIds = new Set(dst.map((z) => z.id));
  const path: Step[] = [];
  for (const p of sortPolicies(policies)) {
    const step = { policy_id: p.id, name: p.name, priority: p.priority };
    let reason: string | null = null;
    if (p.source_zone !== 'any' && !srcIds.has(p.source_zone)) reason = 'source not in the source zone';
    else if (p.destination_zone !== 'any' && !dstIds.has(p.destination_zone)) reason = 'destination not in the destination zone';
    else if (p.protocol !== 'any' && p.protocol !== flow.protocol) reason = `protocol is not ${p.protocol}`;
    else if (flow.protocol !== 'icmp' && !portMatches(p, flow.dst_port)) reason = 'port not in the policy ports';
    path.push({ ...step, matched: reason === null, reason: reason ?? 'matched' });
    if (reason === null) return { ...base, action: p.action, matched_policy: p, path };
  }
  path.push({ policy_id: null, name: 'implicit deny', priority: null, matched: true, reason: 'no policy matched' });
  return { ...base, action: 'deny', matched_policy: null, path };
}

export function sortPolicies(policies: Policy[]): Policy[] {
  return [...policies].sort((a, b) => a.priority - b.priority || a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
}

/** What changes from one policy set to the next, by policy id. */
export function diffPolicies(before: Policy[], after: Policy[]) {
  const old = new Map(before.map((p) => [p.id, p]));
  const now = new Map(after.map((p) => [p.id, p]));
  const added = after.filter((p) => !old.has(p.id));
  const removed = before.filter((p) => !now.has(p.id));
  const changed = after
    .filter((p) => old.has(p.id) && canonical(old.get(p.id)!) !== canonical(p))
    .map((p) => ({ id: p.id, before: old.get(p.id)!, after: p }));
  return { added, removed, changed, unchanged: after.length - added.length - changed.length };
}

/** JSON with sorted keys, so that two objects compare by content, not by key order. */
export function canonical(o: object): string {
  return JSON.stringify(Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b))));
}
