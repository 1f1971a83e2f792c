import ipaddr from 'ipaddr.js';

/** A parsed network: an address range as ipaddr.js gives it (a host is a /32 or /128). */
export interface Net {
  text: string;
  addr: ipaddr.IPv4 | ipaddr.IPv6;
  bits: number;
}

/** `any`, a CIDR or a single address; null when it is none of these. */
export function parseNet(text: string): Net | null {
  const t = text.trim().toLowerCase();
  if (t === 'any') return parseNet('0.0.0.0/0');
  try {
    if (t.includes('/')) {
      const [addr, bits] = ipaddr.parseCIDR(t);
      return { text: t, addr: normal(addr), bits: addr.kind() === 'ipv6' && normal(addr).kind() === 'ipv4' ? bits - 96 : bits };
    }
    const addr = normal(ipaddr.parse(t));
    return { text: t, addr, bits: addr.kind() === 'ipv4' ? 32 : 128 };
  } catch {
    return null;
  }
}

// An IPv4-mapped IPv6 address (::ffff:10.0.0.1, as Node reports IPv4 peers) is the IPv4 address.
function normal(a: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress() ? (a as ipaddr.IPv6).toIPv4Address() : a;
}

export function isNet(text: string): boolean {
  return parseNet(text) !== null;
}

/** Whether `inner` (a network or address) lies wholly inside `outer`. */
export function covers(outer: Net, inner: Net): boolean {
  if (outer.addr.kind() !== inner.addr.kind() || inner.bits < outer.bits) return false;
  return (inner.addr as ipaddr.IPv4).match([outer.addr as ipaddr.IPv4, outer.bits]);
}

export function coversText(outer: string, inner: string): boolean {
  const o = parseNet(outer);
  const i = parseNet(inner);
  return !!o && !!i && covers(o, i);
}

/** 0.0.0.0/0 or ::/0 (or `any`). */
export function isEverything(text: string): boolean {
  const n = parseNet(text);
  return !!n && n.bits === 0;
}

/** The number of addresses in a network, as a power of two (bits of host part). */
export function hostBits(n: Net): number {
  return (n.addr.kind() === 'ipv4' ? 32 : 128) - n.bits;
}

/** The smallest network of the same family holding every address given (for narrowing rules to what was seen). */
export function smallestCover(addresses: string[]): string | null {
  const nets = addresses.map(parseNet).filter((n): n is Net => !!n);
  if (!nets.length || nets.some((n) => n.addr.kind() !== nets[0].addr.kind())) return null;
  const width = nets[0].addr.kind() === 'ipv4' ? 32 : 128;
  const bytes = nets.map((n) => n.addr.toByteArray());
  let bits = Math.min(...nets.map((n) => n.bits));
  for (let b = 0; b < bits; b++) {
    const bit = (x: number[]) => (x[b >> 3] >> (7 - (b & 7))) & 1;
    if (bytes.some((x) => bit(x) !== bit(bytes[0]))) {
      bits = b;
      break;
    }
  }
  const base = bytes[0].map((v, i) => {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    return keep === 0 ? 0 : v & (0xff << (8 - keep)) & 0xff;
  });
  const addr = ipaddr.fromByteArray(base);
  return bits === width ? addr.toString() : `${addr.toString()}/${bits}`;
}
