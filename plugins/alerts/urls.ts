import dns from 'node:dns';
import net from 'node:net';

// Cloud metadata services: reachable only from inside the machine, and full of credentials.
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog']);
const METADATA_V6 = 'fd00:0ec2:0000:0000:0000:0000:0000:0254';

/** Eight 4-digit groups, or null when `a` is not an IPv6 literal. */
function expand6(a: string): string[] | null {
  if (!net.isIPv6(a)) return null;
  let text = a.split('%')[0].toLowerCase();
  const v4 = text.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (v4) {
    const [p, q, r, s] = v4[1].split('.').map(Number);
    text = text.slice(0, -v4[1].length) + `${((p << 8) | q).toString(16)}:${((r << 8) | s).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === null ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.map((g) => g.padStart(4, '0'));
}

/** Why an address may not receive webhooks (link-local or metadata), or null when it may. */
export function forbiddenAddress(address: string): string | null {
  let a = address;
  const g = expand6(a);
  if (g) {
    // IPv4-mapped (::ffff:a.b.c.d) is checked as the IPv4 address it carries.
    if (g.slice(0, 5).every((x) => x === '0000') && g[5] === 'ffff') {
      a = [g[6].slice(0, 2), g[6].slice(2), g[7].slice(0, 2), g[7].slice(2)].map((x) => parseInt(x, 16)).join('.');
    } else {
      if (g.join(':') === METADATA_V6) return 'a cloud metadata address';
      if ((parseInt(g[0], 16) & 0xffc0) === 0xfe80) return 'a link-local address (fe80::/10)';
      return null;
    }
  }
  if (net.isIPv4(a)) {
    if (a === '169.254.169.254') return 'a cloud metadata address';
    if (a.startsWith('169.254.')) return 'a link-local address (169.254.0.0/16)';
  }
  return null;
}

/**
 * Checks a webhook URL: http or https, no credentials in it, a host that is not a metadata
 * name and that resolves only to allowed addresses. Returns the reason to refuse, or null.
 * Loopback and private addresses are allowed (local receivers, tests).
 */
export async function refuseUrl(text: string): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'only http and https URLs are allowed';
  if (url.username || url.password) return 'credentials in the URL are not allowed';
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (METADATA_HOSTS.has(host)) return `host ${host} is a cloud metadata service`;
  if (net.isIP(host)) {
    const why = forbiddenAddress(host);
    return why ? `host ${host} is ${why}` : null;
  }
  let found: dns.LookupAddress[];
  try {
    found = await dns.promises.lookup(host, { all: true });
  } catch {
    return `host ${host} does not resolve`;
  }
  for (const f of found) {
    const why = forbiddenAddress(f.address);
    if (why) return `host ${host} resolves to ${f.address}, ${why}`;
  }
  return null;
}

type LookupCb = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that refuses forbidden addresses at connect time, so that a
 * name re-pointed after the subscription was checked (DNS rebinding) still cannot be reached.
 */
export function safeLookup(hostname: string, options: dns.LookupOptions, cb: LookupCb): void {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return cb(err, '');
    const list = addresses;
    const bad = list.find((a) => forbiddenAddress(a.address));
    if (bad) return cb(Object.assign(new Error(`${hostname} resolves to ${bad.address}, which webhooks may not reach`), { code: 'EFORBIDDEN' }), '');
    if (options.all) return cb(null, list);
    cb(null, list[0].address, list[0].family);
  });
}
