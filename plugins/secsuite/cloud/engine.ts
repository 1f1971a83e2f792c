import { covers, hostBits, isEverything, parseNet, type Net } from '../cidr';
import { portRange } from '../net/policy';

export interface FirewallRule {
  id: string;
  name: string;
  order: number;
  action: 'allow' | 'block';
  sources: string[];
  destinations: string[];
  ports: string[];
  protocol: 'tcp' | 'udp' | 'icmp' | 'any';
  enabled: boolean;
}

/** Ports wider than this many in one rule are reported as a wide range. */
export const WIDE_PORTS = 1024;

const nets = (list: string[]) => list.map(parseNet).filter((n): n is Net => !!n);
const ranges = (list: string[]) => list.map(portRange).filter((r): r is [number, number] => !!r);
const netsCover = (outer: string[], inner: string[]) => nets(inner).every((i) => nets(outer).some((o) => covers(o, i)));
const portsCover = (outer: string[], inner: string[]) => ranges(inner).every(([lo, hi]) => ranges(outer).some(([a, b]) => a <= lo && hi <= b));

export function byOrder(rules: FirewallRule[]): FirewallRule[] {
  return [...rules].sort((a, b) => a.order - b.order || a.name.localeCompare(b.name));
}

/** Why a rule is permissive: any-any, an open source, a wide port range, or shadowed by an earlier rule. */
export function permissiveIssues(rule: FirewallRule, earlier: FirewallRule[]): Array<{ kind: string; detail: string }> {
  const issues: Array<{ kind: string; detail: string }> = [];
  const openSrc = rule.sources.filter(isEverything);
  if (openSrc.length && rule.destinations.some(isEverything)) issues.push({ kind: 'any_any', detail: 'any source to any destination' });
  else if (openSrc.length && rule.action === 'allow') issues.push({ kind: 'open_source', detail: `source ${openSrc.join(', ')} admits every address` });
  const width = ranges(rule.ports).reduce((a, [lo, hi]) => a + (hi - lo + 1), 0);
  if (rule.action === 'allow' && rule.protocol !== 'icmp' && width > WIDE_PORTS) issues.push({ kind: 'wide_ports', detail: `${width} ports open (more than ${WIDE_PORTS})` });
  const shadow = earlier.find((e) => e.enabled && (e.protocol === 'any' || e.protocol === rule.protocol) && netsCover(e.sources, rule.sources) && netsCover(e.destinations, rule.destinations) && portsCover(e.ports, rule.ports));
  if (shadow) issues.push({ kind: 'shadowed', detail: `rule "${shadow.name}" (order ${shadow.order}) matches every flow this one does, first (${shadow.action})` });
  return issues;
}

/** The first enabled rule (by order) that matches a logged connection, or null (implicit block). */
export function firstMatch(rules: FirewallRule[], log: { source_ip: string; destination: string | null; port: number | null; protocol: string }): FirewallRule | null {
  const src = parseNet(log.source_ip);
  const dst = log.destination ? parseNet(log.destination) : null;
  for (const r of rules) {
    if (!r.enabled) continue;
    if (r.protocol !== 'any' && r.protocol !== log.protocol) continue;
    if (!src || !nets(r.sources).some((n) => covers(n, src))) continue;
    // A destination given as a host name is only matched by rules open to every destination.
    if (dst ? !nets(r.destinations).some((n) => covers(n, dst)) : !r.destinations.some(isEverything)) continue;
    if (log.port !== null && !ranges(r.ports).some(([lo, hi]) => log.port! >= lo && log.port! <= hi)) continue;
    return r;
  }
  return null;
}

/** How many addresses a rule's sources admit, as a power of two (the widest source). */
export function sourceBreadth(rule: FirewallRule): number {
  return Math.max(0, ...nets(rule.sources).map(hostBits));
}
