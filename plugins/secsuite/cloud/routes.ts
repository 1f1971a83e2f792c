import crypto from 'node:crypto';
import { z } from 'zod';
import { Conflict, invalid, NotFound } from '../../../core/errors';
import { pageOf } from '../../../core/pagination';
import type { RouteDef, RouteMaker } from '../../../core/plugin';
import { audit, type Deps } from '../deps';
import { byOrder, firstMatch, permissiveIssues, type FirewallRule } from './engine';
import { KINDS, type Kind, ingestBody, logOut, logsQuery, object, pageQuery, revokeBody } from './schemas';

const P = '/cloudsec';
const feature = 'secsuite' as const;
type Row = Record<string, any>;

export function objectOf(r: Row) {
  return { id: r.id as string, kind: r.kind as string, name: r.name as string, order: Number(r.ord), origin: r.origin as 'api' | 'sync', body: JSON.parse(r.body), created_at: r.created_at as string, updated_at: r.updated_at as string };
}

export async function firewallRules(d: Deps, t: string): Promise<FirewallRule[]> {
  const rows = await d.db('cloudsec_objects').where({ tenant_id: t, kind: 'firewall' });
  return byOrder(rows.map((r) => ({ ...JSON.parse(r.body), id: r.id, name: r.name, order: Number(r.ord) })));
}

/** Reports a permissive rule to the security service when it is written. */
export async function reportPermissive(d: Deps, t: string, rule: FirewallRule, earlier: FirewallRule[]) {
  const issues = permissiveIssues(rule, earlier);
  if (issues.length) await d.sec.record({ tenant_id: t, source: 'cloudsec', category: 'cloudsec.permissive_rule', severity: issues.some((i) => i.kind === 'any_any') ? 'high' : 'medium', actor: rule.id, attributes: { name: rule.name, issues } });
  return issues;
}

/** Stored objects (CRUD: list and create), log ingestion and queries, access revocation. */
export function cloudRoutes(route: RouteMaker<Deps>): RouteDef[] {
  const kinds = Object.entries(KINDS) as Array<[Kind, (typeof KINDS)[Kind]]>;
  return [
    ...kinds.map(([kind, k]) =>
      route({
        method: 'get', path: `${P}${k.path}`, summary: k.what, access: 'viewer', feature,
        query: pageQuery, response: z.object({ [k.key]: z.array(object), next_cursor: z.string().nullable() }), errors: [422],
        handler: async ({ query, caller, services }) => {
          const { items, next_cursor } = await pageOf(services.db('cloudsec_objects').where({ tenant_id: caller!.tenantId, kind }), query.limit, query.cursor);
          return { [k.key]: items.map(objectOf), next_cursor };
        },
      }),
    ),
    ...kinds.map(([kind, k]) =>
      route({
        method: 'post', path: `${P}${k.path}`, summary: `Create: ${k.what}`, access: 'member', feature,
        body: k.body as z.ZodType<Record<string, unknown> & { name: string; order: number }>, response: object.extend({ issues: z.array(z.object({ kind: z.string(), detail: z.string() })) }), status: 201, errors: [409, 422],
        handler: async ({ body, caller, services }) => {
          const t = caller!.tenantId;
          if (await services.db('cloudsec_objects').where({ tenant_id: t, kind, name: body.name }).first('id')) throw new Conflict(`"${body.name}" exists`, 'NAME_EXISTS');
          if (kind === 'access' && !(await services.db('cloudsec_objects').where({ tenant_id: t, kind: 'segment', id: body.segment_id }).first('id'))) throw invalid(['body', 'segment_id'], 'no such application segment');
          const now = services.clock.now().toISOString();
          const { name, order, ...rest } = body;
          const row = { id: crypto.randomUUID(), tenant_id: t, kind, name, ord: order, origin: 'api', body: JSON.stringify(rest), created_at: now, updated_at: now };
          await services.db('cloudsec_objects').insert(row);
          await audit(services, caller!, `create_${kind}`, 'cloudsec_object', row.id, { name });
          let issues: Array<{ kind: string; detail: string }> = [];
          if (kind === 'firewall') {
            const all = await firewallRules(services, t);
            const me = all.find((r) => r.id === row.id)!;
            issues = await reportPermissive(services, t, me, all.slice(0, all.indexOf(me)));
          }
          return { ...objectOf(row), issues };
        },
      }),
    ),
    route({
      method: 'post', path: `${P}/logs/ingest`, summary: 'Ingest access logs in a batch; each is attributed to the first matching firewall rule', access: 'member', feature,
      body: ingestBody, response: z.object({ accepted: z.number().int(), by_rule: z.array(z.object({ rule_id: z.string().nullable(), name: z.string().nullable(), hits: z.number().int() })) }), status: 201, errors: [422],
      handler: async ({ body, caller, services }) => {
        const t = caller!.tenantId;
        const rules = await firewallRules(services, t);
        const now = services.clock.now().toISOString();
        const counts = new Map<string | null, number>();
        const rows = body.logs.map((l) => {
          const r = firstMatch(rules, { source_ip: l.source_ip, destination: l.destination, port: l.port ?? null, protocol: l.protocol });
          counts.set(r?.id ?? null, (counts.get(r?.id ?? null) ?? 0) + 1);
          return { id: crypto.randomUUID(), tenant_id: t, at: l.timestamp ? new Date(l.timestamp).toISOString() : now, user: l.user?.toLowerCase() ?? null, app: l.app ?? null, source_ip: l.source_ip, destination: l.destination, port: l.port ?? null, protocol: l.protocol, rule_id: r?.id ?? null, decision: r?.action === 'allow' ? 'allow' : 'block', bytes: l.bytes, created_at: now };
        });
        await services.db.transaction(async (trx) => {
          for (let i = 0; i < rows.length; i += 250) await trx('cloudsec_logs').insert(rows.slice(i, i + 250));
        });
        return { accepted: rows.length, by_rule: [...counts].map(([id, hits]) => ({ rule_id: id, name: rules.find((r) => r.id === id)?.name ?? null, hits })) };
      },
    }),
    route({
      method: 'get', path: `${P}/logs`, summary: 'Query ingested access logs (by user, rule, decision, source), newest first', access: 'viewer', feature,
      query: logsQuery, response: z.object({ logs: z.array(logOut), next_cursor: z.string().nullable() }), errors: [422],
      handler: async ({ query, caller, services }) => {
        const q = services.db('cloudsec_logs').where({ tenant_id: caller!.tenantId });
        if (query.user) q.where('user', query.user.toLowerCase());
        if (query.rule_id) q.where('rule_id', query.rule_id);
        if (query.decision) q.where('decision', query.decision);
        if (query.source_ip) q.where('source_ip', query.source_ip);
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        return { logs: items.map(({ tenant_id: _t, ...r }) => ({ ...r, port: r.port === null ? null : Number(r.port), bytes: Number(r.bytes) })) as never, next_cursor };
      },
    }),
    route({
      method: 'post', path: `${P}/access/revoke`, summary: "Remove a user's access (from every access policy) or an application's (its policies)", access: 'operator', feature,
      body: revokeBody, response: z.object({ removed_policies: z.array(z.string()), updated_policies: z.array(z.string()), action_id: z.string() }), errors: [404, 422],
      handler: async ({ body, caller, services }) => {
        const t = caller!.tenantId;
        const policies = (await services.db('cloudsec_objects').where({ tenant_id: t, kind: 'access' })).map(objectOf);
        const removed: string[] = [];
        const updated: string[] = [];
        const now = services.clock.now().toISOString();
        const user = body.user?.toLowerCase();
        for (const p of policies) {
          const b = p.body as { segment_id: string; users: string[] };
          if (body.segment_id && b.segment_id !== body.segment_id) continue;
          const users = b.users.map((u) => u.toLowerCase());
          if (user && !users.includes(user)) continue;
          const left = user ? b.users.filter((u) => u.toLowerCase() !== user) : [];
          if (!left.length) {
            await services.db('cloudsec_objects').where({ tenant_id: t, id: p.id }).delete();
            removed.push(p.id);
          } else {
            await services.db('cloudsec_objects').where({ tenant_id: t, id: p.id }).update({ body: JSON.stringify({ ...b, users: left }), updated_at: now });
            updated.push(p.id);
          }
        }
        if (!removed.length && !updated.length) throw new NotFound('No access policy grants this access', 'NO_ACCESS');
        const a = await services.sec.recordAction({ tenant_id: t, action: 'revoke_access', target_type: user ? 'user' : 'segment', target_id: user ?? body.segment_id!, trigger: 'operator', actor: caller!.id, result: 'succeeded', detail: { user: user ?? null, segment_id: body.segment_id ?? null, removed_policies: removed, updated_policies: updated, reason: body.reason ?? null } });
        return { removed_policies: removed, updated_policies: updated, action_id: a.id };
      },
    }),
  ];
}
