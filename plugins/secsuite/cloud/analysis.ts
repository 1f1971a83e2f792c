import crypto from 'node:crypto';
import { z } from 'zod';
import { StateConflict } from '../../../core/errors';
import type { RouteDef, RouteMaker } from '../../../core/plugin';
import { parseNet, smallestCover } from '../cidr';
import type { Deps } from '../deps';
import { canonical } from '../net/policy';
import { activeSet, zones } from '../net/store';
import { byOrder, permissiveIssues, sourceBreadth, type FirewallRule } from './engine';
import { firewallRules, reportPermissive } from './routes';

const P = '/cloudsec';
const feature = 'secsuite' as const;
const DAY = 86_400_000;
const SYNC_PREFIX = 'netsec:';
/** Up to this many distinct sources seen, a narrowed rule lists them; past it, their smallest covering network. */
const LIST_SOURCES = 16;

type Translated = Omit<FirewallRule, 'id'>;
const issue = z.object({ kind: z.string(), detail: z.string() });
const translatedSchema = z.object({ name: z.string(), order: z.number().int(), action: z.enum(['allow', 'block']), sources: z.array(z.string()), destinations: z.array(z.string()), ports: z.array(z.string()), protocol: z.string(), enabled: z.boolean() });

/** netsec zones and the active policy set as cloudsec firewall rules (quarantine first). */
async function translate(d: Deps, t: string): Promise<{ version: number; rules: Translated[]; skipped: Array<{ policy: string; reason: string }> }> {
  const set = await activeSet(d.db, t);
  if (!set) throw new StateConflict('no_policy_set', ['apply'], 'netsec has no applied policy set to translate');
  const zs = await zones(d.db, t);
  const byId = new Map(zs.map((z) => [z.id, z]));
  const rules: Translated[] = [];
  const skipped: Array<{ policy: string; reason: string }> = [];
  const quarantined = zs.filter((z) => z.kind === 'quarantine').flatMap((z) => z.members.map((m) => m.value));
  if (quarantined.length) {
    rules.push({ name: `${SYNC_PREFIX}quarantine-out`, order: 0, action: 'block', sources: quarantined, destinations: ['0.0.0.0/0', '::/0'], ports: ['any'], protocol: 'any', enabled: true });
    rules.push({ name: `${SYNC_PREFIX}quarantine-in`, order: 0, action: 'block', sources: ['0.0.0.0/0', '::/0'], destinations: quarantined, ports: ['any'], protocol: 'any', enabled: true });
  }
  const side = (id: string) => (id === 'any' ? ['0.0.0.0/0', '::/0'] : (byId.get(id)?.members.map((m) => m.value) ?? []));
  for (const p of set.policies) {
    const sources = side(p.source_zone);
    const destinations = side(p.destination_zone);
    if (!sources.length || !destinations.length) {
      skipped.push({ policy: p.name, reason: `${!sources.length ? 'source' : 'destination'} zone has no members (or no longer exists)` });
      continue;
    }
    rules.push({ name: `${SYNC_PREFIX}${p.name}`, order: p.priority + 1, action: p.action === 'allow' ? 'allow' : 'block', sources, destinations, ports: p.ports, protocol: p.protocol, enabled: true });
  }
  return { version: set.version, rules, skipped };
}

export function cloudAnalysis(route: RouteMaker<Deps>): RouteDef[] {
  return [
    route({
      method: 'get', path: `${P}/health`, summary: 'Policy engine, stored objects, log intake and last zone sync', access: 'viewer', feature,
      response: z.object({ adapter: z.object({ kind: z.literal('local'), status: z.literal('healthy'), detail: z.string() }), objects: z.record(z.string(), z.number().int()), logs: z.object({ total: z.number().int(), last_24h: z.number().int(), last_at: z.string().nullable() }), last_sync_at: z.string().nullable() }),
      handler: async ({ caller, services }) => {
        const t = caller!.tenantId;
        const objects = Object.fromEntries(['firewall', 'url', 'dlp', 'segment', 'access'].map((k) => [k, 0]));
        for (const r of (await services.db('cloudsec_objects').where({ tenant_id: t }).select('kind').count({ n: '*' }).groupBy('kind')) as Array<Record<string, any>>) objects[r.kind as string] = Number(r.n);
        const day = new Date(services.clock.now().getTime() - DAY).toISOString();
        const total = await services.db('cloudsec_logs').where({ tenant_id: t }).count({ n: '*' }).max({ last: 'at' }).first();
        const recent = await services.db('cloudsec_logs').where({ tenant_id: t }).where('created_at', '>=', day).count({ n: '*' }).first();
        const sync = await services.db('cloudsec_objects').where({ tenant_id: t, origin: 'sync' }).max({ at: 'updated_at' }).first();
        return { adapter: { kind: 'local' as const, status: 'healthy' as const, detail: 'rules are evaluated by this platform (log attribution, permissive checks)' }, objects, logs: { total: Number(total?.n ?? 0), last_24h: Number(recent?.n ?? 0), last_at: (total?.last as string) ?? null }, last_sync_at: (sync?.at as string) ?? null };
      },
    }),
    route({
      method: 'post', path: `${P}/sync/zone-policy`, summary: 'Translate netsec zones and the applied policy set into cloudsec firewall rules, with the diff', access: 'operator', feature,
      body: z.object({ dry_run: z.boolean().default(false) }),
      response: z.object({ netsec_version: z.number().int(), dry_run: z.boolean(), added: z.array(translatedSchema), removed: z.array(z.string()), changed: z.array(z.object({ name: z.string(), before: translatedSchema, after: translatedSchema })), unchanged: z.number().int(), skipped: z.array(z.object({ policy: z.string(), reason: z.string() })), issues: z.array(z.object({ name: z.string(), issues: z.array(issue) })) }),
      errors: [409, 422],
      handler: async ({ body, caller, services }) => {
        const t = caller!.tenantId;
        const { version, rules, skipped } = await translate(services, t);
        const existing = (await firewallRules(services, t)).filter((r) => r.name.startsWith(SYNC_PREFIX));
        const old = new Map(existing.map((r) => [r.name, r]));
        const plain = ({ id: _id, ...r }: FirewallRule): Translated => r;
        const added = rules.filter((r) => !old.has(r.name));
        const changed = rules.filter((r) => old.has(r.name) && canonical(plain(old.get(r.name)!)) !== canonical(r)).map((r) => ({ name: r.name, before: plain(old.get(r.name)!), after: r }));
        const removed = existing.filter((r) => !rules.some((x) => x.name === r.name)).map((r) => r.name);
        const all = byOrder([...(await firewallRules(services, t)).filter((r) => !r.name.startsWith(SYNC_PREFIX)), ...rules.map((r) => ({ ...r, id: r.name }))]);
        const issues = rules.map((r) => {
          const me = all.find((x) => x.id === r.name)!;
          return { name: r.name, issues: permissiveIssues(me, all.slice(0, all.indexOf(me))) };
        }).filter((x) => x.issues.length);
        if (!body.dry_run) {
          const now = services.clock.now().toISOString();
          await services.db.transaction(async (trx) => {
            for (const name of removed) await trx('cloudsec_objects').where({ tenant_id: t, kind: 'firewall', id: old.get(name)!.id }).delete();
            for (const c of changed) await trx('cloudsec_objects').where({ tenant_id: t, id: old.get(c.name)!.id }).update({ ord: c.after.order, body: JSON.stringify(bodyOf(c.after)), updated_at: now });
            for (const r of added) await trx('cloudsec_objects').insert({ id: crypto.randomUUID(), tenant_id: t, kind: 'firewall', name: r.name, ord: r.order, origin: 'sync', body: JSON.stringify(bodyOf(r)), created_at: now, updated_at: now });
          });
          const stored = await firewallRules(services, t);
          for (const x of issues) {
            const me = stored.find((r) => r.name === x.name)!;
            await reportPermissive(services, t, me, stored.slice(0, stored.indexOf(me)));
          }
          await services.sec.recordAction({ tenant_id: t, action: 'sync_zone_policy', target_type: 'policy_set', target_id: String(version), trigger: 'operator', actor: caller!.id, result: 'succeeded', detail: { added: added.length, changed: changed.length, removed: removed.length } });
        }
        return { netsec_version: version, dry_run: body.dry_run, added, removed, changed, unchanged: rules.length - added.length - changed.length, skipped, issues };
      },
    }),
    route({
      method: 'get', path: `${P}/detect/permissive-rules`, summary: 'Firewall rules that are any-any, open to 0.0.0.0/0 or ::/0, open wide port ranges, or shadowed', access: 'viewer', feature,
      response: z.object({ checked: z.number().int(), rules: z.array(z.object({ rule_id: z.string(), name: z.string(), order: z.number().int(), action: z.string(), issues: z.array(issue) })), method: z.string() }),
      handler: async ({ caller, services }) => {
        const rules = await firewallRules(services, caller!.tenantId);
        const found = rules.map((r, i) => ({ rule_id: r.id, name: r.name, order: r.order, action: r.action, issues: r.enabled ? permissiveIssues(r, rules.slice(0, i)) : [] })).filter((x) => x.issues.length);
        return { checked: rules.length, rules: found, method: 'enabled rules in order; any_any: every source and destination; open_source: an allow from 0.0.0.0/0 or ::/0; wide_ports: an allow over more than 1024 ports; shadowed: an earlier enabled rule covers its protocol, sources, destinations and ports (CIDR containment)' };
      },
    }),
    route({
      method: 'get', path: `${P}/optimize/zero-trust`, summary: 'Allow rules never hit in the logs (remove), and broad rules narrowed to the sources actually seen', access: 'viewer', feature,
      query: z.object({ window_days: z.coerce.number().int().min(1).max(365).default(30) }),
      response: z.object({
        window: z.object({ from: z.string(), to: z.string() }), logs_considered: z.number().int(),
        recommendations: z.array(z.object({ rule_id: z.string(), name: z.string(), hits: z.number().int(), recommendation: z.enum(['remove', 'narrow', 'keep']), current_sources: z.array(z.string()), proposed_sources: z.array(z.string()).nullable(), reason: z.string() })),
        method: z.string(),
      }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const t = caller!.tenantId;
        const to = services.clock.now();
        const from = new Date(to.getTime() - query.window_days * DAY).toISOString();
        const rules = (await firewallRules(services, t)).filter((r) => r.enabled && r.action === 'allow');
        const total = await services.db('cloudsec_logs').where({ tenant_id: t }).where('at', '>=', from).count({ n: '*' }).first();
        const recommendations = [];
        for (const r of rules) {
          const hits = Number((await services.db('cloudsec_logs').where({ tenant_id: t, rule_id: r.id }).where('at', '>=', from).count({ n: '*' }).first())?.n ?? 0);
          const base = { rule_id: r.id, name: r.name, hits, current_sources: r.sources };
          if (!hits) {
            recommendations.push({ ...base, recommendation: 'remove' as const, proposed_sources: null, reason: `no logged connection matched it in ${query.window_days} days` });
            continue;
          }
          const seen = (await services.db('cloudsec_logs').where({ tenant_id: t, rule_id: r.id }).where('at', '>=', from).distinct('source_ip').limit(10_000)).map((x) => x.source_ip as string);
          const proposed = seen.length <= LIST_SOURCES ? [...seen].sort() : [smallestCover(seen.filter((s) => parseNet(s)?.addr.kind() === 'ipv4')), smallestCover(seen.filter((s) => parseNet(s)?.addr.kind() === 'ipv6'))].filter((x): x is string => !!x);
          const narrower = Math.max(0, ...proposed.map((p) => sourceBreadth({ ...r, sources: [p] }))) < sourceBreadth(r);
          if (narrower) recommendations.push({ ...base, recommendation: 'narrow' as const, proposed_sources: proposed, reason: `${seen.length} distinct sources seen; the rule admits 2^${sourceBreadth(r)} addresses` });
          else recommendations.push({ ...base, recommendation: 'keep' as const, proposed_sources: null, reason: 'its sources are no wider than what is used' });
        }
        return {
          window: { from, to: to.toISOString() }, logs_considered: Number(total?.n ?? 0), recommendations,
          method: `logs attributed to their first matching rule at ingest; an allow rule with no hits in the window: remove; with hits from narrower sources: the distinct sources (up to ${LIST_SOURCES}) or their smallest covering network per address family`,
        };
      },
    }),
  ];
}

function bodyOf(r: Translated) {
  const { name: _n, order: _o, ...rest } = r;
  return rest;
}

