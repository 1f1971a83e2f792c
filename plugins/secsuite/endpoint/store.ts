import crypto from 'node:crypto';
import type { z } from 'zod';
import type { Severity } from '../../../core/contracts/security';
import { covers, parseNet } from '../cidr';
import type { Deps } from '../deps';
import type { indicatorsIn } from './schemas';
import { normalIndicator, type IndicatorType } from './stix';

type Indicators = z.output<typeof indicatorsIn>;
export type Kind = 'event' | 'detection' | 'identity';

export interface IncomingRecord {
  source: string;
  device_id?: string;
  identity?: string;
  hostname?: string;
  address?: string;
  type: string;
  severity: Severity;
  occurred_at?: string;
  indicators: Indicators;
  data: Record<string, unknown>;
}

export function recordOf(r: Record<string, any>) {
  return { ...r, intel_matches: Number(r.intel_matches), indicators: JSON.parse(r.indicators), data: JSON.parse(r.data) };
}

/** Which security events an ingested record also makes (the SIEM sees detections and anything medium or worse). */
function securityCategory(kind: Kind, severity: Severity): string | null {
  if (kind === 'detection') return 'endpoint.detection';
  if (kind === 'identity') return 'endpoint.identity';
  return ['medium', 'high', 'critical'].includes(severity) ? 'endpoint.event' : null;
}

/**
 * Stores pushed records. Records of a contained (quarantined) device are refused: its
 * agent's data no longer reaches the platform until it is released. Detections are
 * matched against the indicator store at once.
 */
export async function ingest(d: Deps, tenantId: string, keyId: string | null, kind: Kind, items: IncomingRecord[]) {
  const now = d.clock.now().toISOString();
  const devices = [...new Set(items.map((i) => i.device_id).filter((x): x is string => !!x))];
  const contained = new Set(
    (await d.db('endpointsec_devices').where({ tenant_id: tenantId, containment: 'contained' }).whereIn('device_id', devices).select('device_id')).map((r) => r.device_id as string),
  );
  const refused: Array<{ index: number; device_id: string | null; code: string; detail: string }> = [];
  const rows: Array<Record<string, unknown>> = [];
  items.forEach((it, index) => {
    if (it.device_id && contained.has(it.device_id)) {
      refused.push({ index, device_id: it.device_id, code: 'DEVICE_QUARANTINED', detail: `device ${it.device_id} is quarantined; its data is refused until it is released` });
      return;
    }
    rows.push({
      id: crypto.randomUUID(), tenant_id: tenantId, kind, source: it.source, device_id: it.device_id ?? null, identity: it.identity?.toLowerCase() ?? null,
      type: it.type, severity: it.severity, occurred_at: it.occurred_at ? new Date(it.occurred_at).toISOString() : now,
      indicators: JSON.stringify(it.indicators), data: JSON.stringify(it.data), intel_matches: 0, created_at: now,
    });
  });
  if (refused.length && keyId) await d.db('endpointsec_keys').where({ id: keyId }).increment('refused_uses', refused.length);
  let matches = 0;
  await d.db.transaction(async (trx) => {
    for (let i = 0; i < rows.length; i += 200) await trx('endpointsec_records').insert(rows.slice(i, i + 200));
    for (const it of items) {
      if (!it.device_id || contained.has(it.device_id)) continue;
      const seen = { hostname: it.hostname ?? null, address: it.address ?? null, last_seen_at: now, updated_at: now };
      await trx('endpointsec_devices')
        .insert({ id: crypto.randomUUID(), tenant_id: tenantId, device_id: it.device_id, containment: 'normal', created_at: now, ...seen })
        .onConflict(['tenant_id', 'device_id'])
        .merge(Object.fromEntries(Object.entries(seen).filter(([, v]) => v !== null)));
    }
  });
  for (const row of rows) {
    const category = securityCategory(kind, row.severity as Severity);
    let found: Match[] = [];
    if (kind === 'detection') {
      found = await matchIndicators(d, tenantId, JSON.parse(row.indicators as string));
      if (found.length) {
        matches += found.length;
        await d.db('endpointsec_records').where({ id: row.id }).update({ intel_matches: found.length });
      }
    }
    if (category) await d.sec.record({ tenant_id: tenantId, source: 'endpointsec', category, severity: row.severity as Severity, actor: (row.device_id ?? row.identity) as string, attributes: { record_id: row.id, type: row.type, source: row.source } });
    if (found.length) {
      await d.sec.record({ tenant_id: tenantId, source: 'endpointsec', category: 'endpoint.intel_match', severity: 'high', actor: row.device_id as string, attributes: { record_id: row.id, matches: found.map((m) => ({ type: m.type, value: m.value, indicator_id: m.indicator_id })) } });
    }
  }
  return { accepted: rows.length, ids: rows.map((r) => r.id as string), refused, intel_matches: matches };
}

export interface Match {
  type: IndicatorType;
  value: string;
  indicator_id: string;
  source: string;
  name: string | null;
  stix_id: string | null;
  matched_by: string;
}

/**
 * Exact matches for hashes, domains (and their parent domains) and URLs; IP indicators
 * may be networks, so an observed address matches an indicator network that covers it.
 */
export async function matchIndicators(d: Deps, tenantId: string, ind: Indicators): Promise<Match[]> {
  const now = d.clock.now().toISOString();
  const live = () => d.db('endpointsec_indicators').where({ tenant_id: tenantId }).where((w) => w.whereNull('valid_until').orWhere('valid_until', '>', now));
  const out: Match[] = [];
  const add = (rows: Array<Record<string, any>>, by: (r: Record<string, any>) => string) =>
    rows.forEach((r) => out.push({ type: r.type, value: r.value, indicator_id: r.id, source: r.source, name: r.name ?? null, stix_id: r.stix_id ?? null, matched_by: by(r) }));
  const hashes = ind.hashes.map((h) => normalIndicator('hash', h));
  if (hashes.length) add(await live().where({ type: 'hash' }).whereIn('value', hashes), () => 'equal hash');
  const domains = ind.domains.map((x) => normalIndicator('domain', x));
  const parents = [...new Set(domains.flatMap((x) => x.split('.').map((_, i, p) => p.slice(i).join('.')).filter((s) => s.includes('.'))))];
  if (parents.length) add(await live().where({ type: 'domain' }).whereIn('value', parents), (r) => (domains.includes(r.value) ? 'equal domain' : 'parent domain'));
  if (ind.urls.length) add(await live().where({ type: 'url' }).whereIn('value', ind.urls.map((u) => normalIndicator('url', u))), () => 'equal url');
  const ips = ind.ips.map(parseNet).filter((n) => !!n);
  if (ips.length) {
    for (const r of await live().where({ type: 'ip' })) {
      const net = parseNet(r.value);
      const hit = net && ips.find((ip) => covers(net, ip!));
      if (hit) out.push({ type: 'ip', value: r.value, indicator_id: r.id, source: r.source, name: r.name ?? null, stix_id: r.stix_id ?? null, matched_by: hit.text === r.value ? 'equal address' : `${hit.text} inside ${r.value}` });
    }
  }
  return out;
}
