import crypto from 'node:crypto';
import { z } from 'zod';
import { NotFound, Unprocessable, type ValidationIssue } from '../../../core/errors';
import type { RouteDef, RouteMaker } from '../../../core/plugin';
import { coversText } from '../cidr';
import type { Deps } from '../deps';
import { internationalNumber, parseSip, SCANNER_AGENTS, THRESHOLDS, type SipMessage } from './sip';
import { zones } from './store';

const P = '/netsec';
const feature = 'secsuite' as const;
const ip = z.string().min(2).max(64).refine((v) => /^[0-9a-fA-F:.]+$/.test(v), 'an IP address');

const messagesBody = z.object({
  connection_id: z.string().min(1).max(128).regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : - only'),
  messages: z.array(z.object({ raw: z.string().min(10).max(16_000), source_ip: ip, received_at: z.iso.datetime({ offset: true }).optional() })).min(1).max(1000),
});
const detection = z.object({ category: z.enum(['netsec.sip_scan', 'netsec.sip_bruteforce', 'netsec.toll_fraud']), source_ip: z.string(), count: z.number().int(), window_seconds: z.number().int(), reason: z.string(), event_id: z.string().nullable() });

type Found = z.output<typeof detection>;
interface SipRow {
  id: string; tenant_id: string; connection_id: string; source_ip: string; method: string | null; status: number | null; cseq_method: string | null;
  call_id: string | null; from_uri: string | null; to_uri: string | null; user_agent: string | null; received_at: string; latency_ms: number | null; created_at: string;
}

/** SIP ingestion with attack detection, SBC connection health, and the carrier allow-list. */
export function sipRoutes(route: RouteMaker<Deps>): RouteDef[] {
  return [
    route({
      method: 'post', path: `${P}/sip/messages`, summary: 'Ingest SIP messages (RFC 3261 text) of a connection; detects scans, registration brute force and toll fraud', access: 'member', feature,
      body: messagesBody, response: z.object({ accepted: z.number().int(), detections: z.array(detection) }), status: 201, errors: [422],
      handler: async ({ body, caller, services }) => {
        const t = caller!.tenantId;
        const now = services.clock.now().toISOString();
        const issues: ValidationIssue[] = [];
        const parsed: Array<SipMessage & { source_ip: string; received_at: string }> = [];
        body.messages.forEach((m, i) => {
          try {
            parsed.push({ ...parseSip(m.raw), source_ip: m.source_ip, received_at: m.received_at ? new Date(m.received_at).toISOString() : now });
          } catch (err) {
            issues.push({ loc: ['body', 'messages', i, 'raw'], msg: (err as Error).message, type: 'value_error' });
          }
        });
        if (issues.length) throw new Unprocessable(issues);
        const rows: SipRow[] = [];
        for (const m of parsed) {
          let latency: number | null = null;
          if (m.status !== null) {
            // A response's latency: from the latest request of its transaction (Call-ID and CSeq method) in this batch or before.
            const inBatch = [...rows].reverse().find((r) => r.method === m.cseq_method && r.call_id === m.call_id && r.received_at <= m.received_at);
            const req: { received_at: string } | undefined = inBatch ?? (await services.db('netsec_sip_messages').where({ tenant_id: t, call_id: m.call_id, method: m.cseq_method }).where('received_at', '<=', m.received_at).orderBy('received_at', 'desc').first('received_at'));
            if (req) latency = Date.parse(m.received_at) - Date.parse(req.received_at);
          }
          rows.push({ id: crypto.randomUUID(), tenant_id: t, connection_id: body.connection_id, source_ip: m.source_ip, method: m.method, status: m.status, cseq_method: m.cseq_method, call_id: m.call_id, from_uri: m.from_uri?.slice(0, 512) ?? null, to_uri: (m.request_uri ?? m.to_uri)?.slice(0, 512) ?? null, user_agent: m.user_agent?.slice(0, 256) ?? null, received_at: m.received_at, latency_ms: latency, created_at: now });
        }
        await services.db.transaction(async (trx) => {
          for (let i = 0; i < rows.length; i += 200) await trx('netsec_sip_messages').insert(rows.slice(i, i + 200));
        });
        const found: Found[] = [];
        for (const src of new Set(rows.filter((r) => r.method).map((r) => r.source_ip))) found.push(...(await detect(services, t, src, rows.filter((r) => r.source_ip === src))));
        for (const f of found) {
          const since = new Date(Date.parse(now) - f.window_seconds * 1000).toISOString();
          const seen = (await services.sec.recentEvents(t, f.category, since, 50)).some((e) => e.address === f.source_ip);
          if (seen) continue; // one event per attack window, not one per batch
          const e = await services.sec.record({ tenant_id: t, source: 'netsec', category: f.category, severity: 'high', actor: body.connection_id, address: f.source_ip, attributes: { count: f.count, window_seconds: f.window_seconds, reason: f.reason } });
          f.event_id = e.id;
        }
        return { accepted: rows.length, detections: found };
      },
    }),
    route({
      method: 'get', path: `${P}/sbc/health/{connection_id}`, summary: "A connection's health from its message stats (response classes, latency)", access: 'viewer', feature,
      params: z.object({ connection_id: z.string().min(1).max(128) }), query: z.object({ window_minutes: z.coerce.number().int().min(1).max(10_080).default(60) }),
      response: z.object({
        connection_id: z.string(), status: z.enum(['healthy', 'degraded', 'unhealthy', 'idle']), window: z.object({ from: z.string(), to: z.string() }),
        requests: z.number().int(), responses: z.record(z.string(), z.number().int()), success_ratio: z.number().nullable(), server_error_ratio: z.number().nullable(),
        latency_ms: z.object({ count: z.number().int(), p50: z.number().nullable(), p95: z.number().nullable() }), reasons: z.array(z.string()), method: z.string(),
      }),
      errors: [404, 422],
      handler: async ({ params, query, caller, services }) => {
        const t = caller!.tenantId;
        if (!(await services.db('netsec_sip_messages').where({ tenant_id: t, connection_id: params.connection_id }).first('id'))) throw new NotFound('Connection not found (no SIP messages seen on it)', 'CONNECTION_NOT_FOUND');
        const to = services.clock.now();
        const from = new Date(to.getTime() - query.window_minutes * 60_000).toISOString();
        const msgs = await services.db('netsec_sip_messages').where({ tenant_id: t, connection_id: params.connection_id }).where('received_at', '>=', from).where('received_at', '<=', to.toISOString()).select('method', 'status', 'latency_ms');
        const classes: Record<string, number> = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, '6xx': 0 };
        const lat: number[] = [];
        let requests = 0;
        for (const m of msgs) {
          if (m.method) requests += 1;
          else if (m.status) {
            classes[`${Math.floor(m.status / 100)}xx`] += 1;
            if (m.status >= 200 && m.latency_ms !== null) lat.push(Number(m.latency_ms));
          }
        }
        const final = classes['2xx'] + classes['3xx'] + classes['4xx'] + classes['5xx'] + classes['6xx'];
        const serverErrors = final ? (classes['5xx'] + classes['6xx']) / final : null;
        lat.sort((a, b) => a - b);
        const pct = (p: number) => (lat.length ? lat[Math.min(lat.length - 1, Math.ceil((p / 100) * lat.length) - 1)] : null);
        const reasons: string[] = [];
        let status: 'healthy' | 'degraded' | 'unhealthy' | 'idle' = msgs.length ? 'healthy' : 'idle';
        if (serverErrors !== null && serverErrors >= 0.2) reasons.push(`server errors ${(serverErrors * 100).toFixed(1)}% of final responses (>= 20%)`);
        if (requests > 0 && final === 0) reasons.push('requests without any final response');
        if (reasons.length) status = 'unhealthy';
        else if ((serverErrors ?? 0) >= 0.05 || (pct(95) ?? 0) > 2000) {
          status = 'degraded';
          reasons.push((serverErrors ?? 0) >= 0.05 ? `server errors ${((serverErrors ?? 0) * 100).toFixed(1)}% (>= 5%)` : `p95 latency ${pct(95)} ms (> 2000 ms)`);
        }
        return {
          connection_id: params.connection_id, status, window: { from, to: to.toISOString() }, requests, responses: classes,
          success_ratio: final ? classes['2xx'] / final : null, server_error_ratio: serverErrors, latency_ms: { count: lat.length, p50: pct(50), p95: pct(95) }, reasons,
          method: 'final responses (>= 200) by class; latency from each request to its response (same Call-ID and CSeq method), nearest-rank percentiles; unhealthy at >= 20% 5xx/6xx or requests never answered, degraded at >= 5% or p95 > 2 s',
        };
      },
    }),
    route({
      method: 'get', path: `${P}/sbc/carrier-acl`, summary: 'The carrier allow-list: carrier providers and carrier zones, minus quarantined addresses', access: 'viewer', feature,
      response: z.object({ entries: z.array(z.object({ address: z.string(), source: z.string() })), excluded: z.array(z.object({ address: z.string(), source: z.string(), reason: z.string() })), method: z.string() }),
      handler: async ({ caller, services }) => {
        const t = caller!.tenantId;
        const zs = await zones(services.db, t);
        const quarantined = zs.filter((z) => z.kind === 'quarantine').flatMap((z) => z.members.map((m) => ({ value: m.value, zone: z.name })));
        const candidates = [
          ...(await services.db('netsec_providers').where({ tenant_id: t, carrier: true }).orderBy('name')).flatMap((p) => (JSON.parse(p.addresses) as string[]).map((address) => ({ address, source: `provider:${p.name}` }))),
          ...zs.filter((z) => z.kind === 'carrier').flatMap((z) => z.members.map((m) => ({ address: m.value, source: `zone:${z.name}` }))),
        ];
        const entries: Array<{ address: string; source: string }> = [];
        const excluded: Array<{ address: string; source: string; reason: string }> = [];
        for (const c of candidates) {
          const q = quarantined.find((x) => coversText(x.value, c.address) || coversText(c.address, x.value));
          if (q) excluded.push({ ...c, reason: `overlaps ${q.value} in quarantine zone ${q.zone}` });
          else if (!entries.some((e) => e.address === c.address)) entries.push(c);
        }
        return { entries, excluded, method: 'addresses of providers marked carrier and members of carrier zones; any that overlaps a quarantine-zone member (CIDR) is left out' };
      },
    }),
  ];
}

/** Attack patterns of one source, over its recent messages (stored, this batch included). */
async function detect(d: Deps, t: string, src: string, batch: Array<{ method: string | null; user_agent: string | null; received_at: string }>): Promise<Found[]> {
  const latest = batch.map((r) => r.received_at).sort().at(-1)!;
  const ago = (s: number) => new Date(Date.parse(latest) - s * 1000).toISOString();
  const out: Found[] = [];
  const base = d.db('netsec_sip_messages').where({ tenant_id: t, source_ip: src }).where('received_at', '<=', latest);
  const options = Number((await base.clone().where({ method: 'OPTIONS' }).where('received_at', '>=', ago(60)).count({ n: '*' }).first())?.n ?? 0);
  const agent = batch.find((r) => r.user_agent && SCANNER_AGENTS.some((re) => re.test(r.user_agent!)))?.user_agent;
  if (options >= THRESHOLDS.optionsPerMinute || agent) {
    out.push({ category: 'netsec.sip_scan', source_ip: src, count: options, window_seconds: 60, reason: agent ? `scanner user agent "${agent}"` : `${options} OPTIONS in 60 s (>= ${THRESHOLDS.optionsPerMinute})`, event_id: null });
  }
  const registers = (await base.clone().where({ method: 'REGISTER' }).where('received_at', '>=', ago(300)).select('call_id')).map((r) => r.call_id as string);
  if (registers.length) {
    const failed = Number((await d.db('netsec_sip_messages').where({ tenant_id: t, cseq_method: 'REGISTER' }).whereIn('status', [401, 403]).whereIn('call_id', registers.slice(0, 5000)).count({ n: '*' }).first())?.n ?? 0);
    if (failed >= THRESHOLDS.registerFailures) out.push({ category: 'netsec.sip_bruteforce', source_ip: src, count: failed, window_seconds: 300, reason: `${failed} REGISTER attempts refused (401/403) in 5 min (>= ${THRESHOLDS.registerFailures})`, event_id: null });
  }
  const invites = await base.clone().where({ method: 'INVITE' }).where('received_at', '>=', ago(600)).select('to_uri');
  const numbers = new Set(invites.map((r) => internationalNumber(r.to_uri)).filter((n) => n));
  if (numbers.size >= THRESHOLDS.tollNumbers) out.push({ category: 'netsec.toll_fraud', source_ip: src, count: numbers.size, window_seconds: 600, reason: `INVITEs to ${numbers.size} distinct international numbers in 10 min (>= ${THRESHOLDS.tollNumbers})`, event_id: null });
  return out;
}
