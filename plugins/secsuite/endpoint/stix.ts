/** Indicator kinds the store matches: file hashes, IP addresses (or networks), domains, URLs. */
export type IndicatorType = 'hash' | 'ip' | 'domain' | 'url';

export interface ParsedIndicator {
  type: IndicatorType;
  value: string;
  stix_id: string;
  name: string | null;
  labels: string[];
  valid_until: string | null;
}

/** Comparisons `object:path = 'value'` inside a STIX 2.1 pattern (§9); quotes escaped with a backslash. */
const COMPARISON = /([a-z0-9-]+):([A-Za-z0-9_.'-]+?)\s*=\s*'((?:[^'\\]|\\.)*)'/g;

function kindOf(object: string, path: string): IndicatorType | null {
  if (object === 'file' && path.startsWith('hashes.')) return 'hash';
  if ((object === 'ipv4-addr' || object === 'ipv6-addr') && path === 'value') return 'ip';
  if (object === 'domain-name' && path === 'value') return 'domain';
  if (object === 'url' && path === 'value') return 'url';
  return null;
}

/** Normal form used for storing and matching: hashes and domains lower case, URLs as given. */
export function normalIndicator(type: IndicatorType, value: string): string {
  return type === 'url' ? value.trim() : value.trim().toLowerCase();
}

/**
 * Reads the indicators of a STIX 2.1 bundle (a JSON object `{type: "bundle", objects}`):
 * each `indicator` object with `pattern_type: "stix"` yields one indicator per equality
 * comparison on a supported object path. Other objects are counted as skipped.
 */
export function parseBundle(bundle: unknown): { indicators: ParsedIndicator[]; skipped: Array<{ id: string; reason: string }> } {
  const b = bundle as { type?: unknown; objects?: unknown };
  if (!b || typeof b !== 'object' || b.type !== 'bundle' || !Array.isArray(b.objects)) throw new Error('not a STIX 2.1 bundle: expected {"type": "bundle", "objects": [...]}');
  const indicators: ParsedIndicator[] = [];
  const skipped: Array<{ id: string; reason: string }> = [];
  for (const o of b.objects as Array<Record<string, unknown>>) {
    const id = typeof o?.id === 'string' ? o.id : '(no id)';
    if (o?.type !== 'indicator') {
      skipped.push({ id, reason: `object type ${String(o?.type)} is not an indicator` });
      continue;
    }
    if (o.pattern_type !== 'stix' || typeof o.pattern !== 'string') {
      skipped.push({ id, reason: `pattern type ${String(o.pattern_type)} is not supported` });
      continue;
    }
    if (o.revoked === true) {
      skipped.push({ id, reason: 'revoked' });
      continue;
    }
    const labels = [...(Array.isArray(o.labels) ? o.labels : []), ...(Array.isArray(o.indicator_types) ? o.indicator_types : [])].map(String);
    let found = 0;
    for (const m of o.pattern.matchAll(COMPARISON)) {
      const type = kindOf(m[1], m[2]);
      if (!type) continue;
      found += 1;
      indicators.push({
        type,
        value: normalIndicator(type, m[3].replace(/\\(.)/g, '$1')),
        stix_id: id,
        name: typeof o.name === 'string' ? o.name.slice(0, 256) : null,
        labels,
        valid_until: typeof o.valid_until === 'string' ? o.valid_until : null,
      });
    }
    if (!found) skipped.push({ id, reason: 'no supported comparison (file hashes, ipv4/ipv6-addr, domain-name, url values)' });
  }
  return { indicators, skipped };
}
