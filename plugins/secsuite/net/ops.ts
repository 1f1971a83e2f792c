import crypto from 'node:crypto';
import { z } from 'zod';
import type { Severity } from '../../../core/contracts/security';
import { Conflict, NotFound } from '../../../core/errors';
import { pageOf } from '../../../core/pagination';
import type { RouteDef, RouteMaker } from '../../../core/plugin';
import { audit, type Deps } from '../deps';
import { probe } from '../probe';
import * as s from './schemas';
import { isolateAddress, zones } from './store';
import { atLeast, threats, type Threat } from './threats';

const P = '/netsec';
const feature = 'secsuite' as const;

/** Self-healing rules, as data: which threats call for which action. */
export const HEALING_RULES: Array<{ id: string; version: number; description: string; min_severity: Severity; categories: string[] | null; address_in_zone: boolean; action: 'isolate' | 'block' }> = [
  { id: 'isolate-compromised-member', version: 1, description: 'A high-severity threat on an address that is a member of a zone: move it to quarantine', min_severity: 'high', categories: null, address_in_zone: true, action: 'isolate' },
  { id: 'block-hostile-external', version: 1, description: 'A SIP attack from an address outside every zone: block it (quarantine zone)', min_severity: 'medium', categories: ['netsec.sip_scan', 'netsec.sip_bruteforce', 'netsec.toll_fraud', 'netsec-sip-attack'], address_in_zone: false, action: 'block' },
];

const proposal = z.object({ rule_id: z.string(), rule_version: z.number().int(), action: z.enum(['isolate', 'block']), address: z.string(), threat_ids: z.array(z.string()), result: z.enum(['proposed', 'applied', 'failed']), detail: z.string().nullable(), action_id: z.string().nullable() });
const healingRun = z.object({ id: z.string(), mode: z.enum(['propose', 'apply']), proposals: z.array(proposal), actor: z.string(), created_at: z.string() });
type Proposal = z.output<typeof proposal>;

function propose(list: Threat[]): Proposal[] {
  const byAddress = new Map<string, Proposal>();
  for (const t of list) {
    if (!t.address || t.address.includes('/') || t.isolated) continue;
    const rule = HEALING_RULES.find((r) => atLeast(t.severity, r.min_severity) && (!r.categories || r.categories.includes(t.category)) && r.address_in_zone === t.zones.length > 0);
    if (!rule) continue;
    const p = byAddress.get(t.address);
    if (p) p.threat_ids.push(t.id);
    else byAddress.set(t.address, { rule_id: rule.id, rule_version: rule.version, action: rule.action, address: t.address, threat_ids: [t.id], result: 'proposed', detail: null, action_id: null });
  }
  return [...byAddress.values()];
}

/** Threats, isolation, providers and self-healing. */
export function netOps(route: RouteMaker<Deps>): RouteDef[] {
  return [
    route({
      method: 'get', path: `${P}/threats`, summary: 'Open findings and recent network, endpoint and cloud security events, placed in zones', access: 'viewer', feature,
      response: z.object({ threats: z.array(s.threat), window_days: z.number().int() }),
      handler: async ({ caller, services }) => ({ threats: await threats(services, caller!.tenantId, await zones(services.db, caller!.tenantId)), window_days: 7 }),
    }),
    route({
      method: 'post', path: `${P}/isolate`, summary: 'Move a member into the quarantine zone: every flow to or from it is denied', access: 'operator', feature,
      body: s.isolateBody, response: s.isolateResponse, errors: [404, 409, 422],
      handler: async ({ body, caller, services }) => {
        const t = caller!.tenantId;
        const zs = await zones(services.db, t);
        if (!zs.some((z) => z.kind !== 'quarantine' && z.members.some((m) => m.value === body.address))) throw new NotFound(`${body.address} is not a member of any zone`, 'MEMBER_NOT_FOUND');
        const moved = await isolateAddress(services.db, t, body.address, services.clock.now().toISOString());
        const a = await services.sec.recordAction({ tenant_id: t, action: 'isolate_member', target_type: 'address', target_id: body.address, trigger: 'operator', actor: caller!.id, result: 'succeeded', detail: { ...moved, reason: body.reason ?? null } });
        return { address: body.address, ...moved, action_id: a.id };
      },
    }),
    route({
      method: 'post', path: `${P}/providers`, summary: 'Register a firewall provider (local engine or an HTTP manager), optionally a SIP carrier with its addresses', access: 'operator', feature,
      body: s.providerBody, response: s.provider, status: 201, errors: [409, 422],
      handler: async ({ body, caller, services }) => {
        if (await services.db('netsec_providers').where({ tenant_id: caller!.tenantId, name: body.name }).first('id')) throw new Conflict(`A provider named "${body.name}" exists`, 'PROVIDER_EXISTS');
        const row = { id: crypto.randomUUID(), tenant_id: caller!.tenantId, name: body.name, adapter: body.adapter, url: body.url ?? null, addresses: JSON.stringify(body.addresses), carrier: body.carrier, created_at: services.clock.now().toISOString() };
        await services.db('netsec_providers').insert(row);
        await audit(services, caller!, 'create_provider', 'provider', row.id, { name: row.name, adapter: row.adapter, carrier: row.carrier });
        return { ...row, addresses: body.addresses, health: await health(row.adapter, row.url) };
      },
    }),
    route({
      method: 'get', path: `${P}/providers`, summary: 'Firewall providers with their adapter and measured health', access: 'viewer', feature,
      query: s.pageQuery, response: z.object({ providers: z.array(s.provider), next_cursor: z.string().nullable() }), errors: [422],
      handler: async ({ query, caller, services }) => {
        const { items, next_cursor } = await pageOf(services.db('netsec_providers').where({ tenant_id: caller!.tenantId }), query.limit, query.cursor);
        const providers = await Promise.all(items.map(async (r) => ({ id: r.id, name: r.name, adapter: r.adapter, url: r.url ?? null, addresses: JSON.parse(r.addresses), carrier: Boolean(r.carrier), created_at: r.created_at, health: await health(r.adapter, r.url) })));
        return { providers, next_cursor };
      },
    }),
    route({
      method: 'post', path: `${P}/healing/evaluate`, summary: 'Evaluate the self-healing rules against current threats; propose, or apply (isolate, block)', access: 'operator', feature,
      body: z.object({ mode: z.enum(['propose', 'apply']).default('propose') }), response: healingRun, status: 201, errors: [422],
      handler: async ({ body, caller, services }) => {
        const t = caller!.tenantId;
        const now = () => services.clock.now().toISOString();
        const proposals = propose(await threats(services, t, await zones(services.db, t)));
        if (body.mode === 'apply') {
          for (const p of proposals) {
            try {
              const moved = await isolateAddress(services.db, t, p.address, now());
              const a = await services.sec.recordAction({ tenant_id: t, action: p.action === 'isolate' ? 'isolate_member' : 'block_address', target_type: 'address', target_id: p.address, trigger: 'rule', actor: 'netsec-healing', result: 'succeeded', detail: { ...moved, rule_id: p.rule_id, requested_by: caller!.id, threats: p.threat_ids } });
              Object.assign(p, { result: 'applied', action_id: a.id, detail: moved.from_zones.length ? `moved from ${moved.from_zones.join(', ')} to ${moved.quarantine_zone}` : `added to ${moved.quarantine_zone}` });
            } catch (err) {
              Object.assign(p, { result: 'failed', detail: (err as Error).message });
            }
          }
        }
        const row = { id: crypto.randomUUID(), tenant_id: t, mode: body.mode, proposals: JSON.stringify(proposals), actor: caller!.id, created_at: now() };
        await services.db('netsec_healing_runs').insert(row);
        if (body.mode === 'propose') await audit(services, caller!, 'evaluate_healing', 'healing_run', row.id, { proposals: proposals.length });
        return { id: row.id, mode: body.mode, proposals, actor: row.actor, created_at: row.created_at };
      },
    }),
    route({
      method: 'get', path: `${P}/healing/history`, summary: 'Past self-healing evaluations with what they proposed and applied', access: 'viewer', feature,
      query: s.pageQuery, response: z.object({ runs: z.array(healingRun), next_cursor: z.string().nullable() }), errors: [422],
      handler: async ({ query, caller, services }) => {
        const { items, next_cursor } = await pageOf(services.db('netsec_healing_runs').where({ tenant_id: caller!.tenantId }), query.limit, query.cursor);
        return { runs: items.map((r) => ({ id: r.id, mode: r.mode, proposals: JSON.parse(r.proposals), actor: r.actor, created_at: r.created_at })), next_cursor };
      },
    }),
  ];
}

/** The local adapter is this platform's own policy engine; an HTTP manager is probed. */
async function health(adapter: string, url: string | null): Promise<{ status: 'healthy' | 'unreachable' | 'unknown'; latency_ms: number | null; detail: string }> {
  if (adapter === 'local') return { status: 'healthy', latency_ms: null, detail: 'the in-process policy engine (netsec policy sets)' };
  if (!url) return { status: 'unknown', latency_ms: null, detail: 'no url' };
  const p = await probe(url);
  return { status: p.reachable ? 'healthy' : 'unreachable', latency_ms: p.latency_ms, detail: p.detail };
}
