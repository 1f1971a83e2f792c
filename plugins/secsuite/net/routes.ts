import crypto from 'node:crypto';
import { z } from 'zod';
import { Conflict, invalid, NotFound, StateConflict } from '../../../core/errors';
import type { RouteDef, RouteMaker } from '../../../core/plugin';
import { audit, type Deps } from '../deps';
import { diffPolicies, evaluate, sortPolicies, type Policy } from './policy';
import * as s from './schemas';
import { activeSet, createZone, drafts, memberText, policyOf, saveMembers, zone, zoneOf, zones } from './store';
import { pageOf } from '../../../core/pagination';

const P = '/netsec';
const feature = 'secsuite' as const;
const strip = ({ created_at: _c, updated_at: _u, ...p }: Policy & { created_at?: string; updated_at?: string }): Policy => p;

/** Zones with their members, policies, the versioned policy set and flow simulation. */
export function netRoutes(route: RouteMaker<Deps>): RouteDef[] {
  return [
    route({
      method: 'get', path: `${P}/zones`, summary: 'Zones with their members', access: 'viewer', feature,
      query: s.pageQuery, response: z.object({ zones: z.array(s.zone), next_cursor: z.string().nullable() }), errors: [422],
      handler: async ({ query, caller, services }) => {
        const { items, next_cursor } = await pageOf(services.db('netsec_zones').where({ tenant_id: caller!.tenantId }), query.limit, query.cursor);
        return { zones: items.map(zoneOf), next_cursor };
      },
    }),
    route({
      method: 'get', path: `${P}/zones/{zone_id}`, summary: 'One zone', access: 'viewer', feature,
      params: s.zoneParams, response: s.zone, errors: [404],
      handler: ({ params, caller, services }) => zone(services.db, caller!.tenantId, params.zone_id),
    }),
    route({
      method: 'post', path: `${P}/zones`, summary: 'Create a zone (standard, quarantine or carrier) with members (hosts, CIDRs)', access: 'member', feature,
      body: s.zoneBody, response: s.zone, status: 201, errors: [409, 422],
      handler: async ({ body, caller, services }) => {
        const members = [...new Set(body.members.map((m) => memberText(m)!))];
        const created = await createZone(services.db, caller!.tenantId, { ...body, members }, services.clock.now().toISOString());
        await audit(services, caller!, 'create_zone', 'zone', created.id, { name: created.name, kind: created.kind, members: members.length });
        return created;
      },
    }),
    route({
      method: 'patch', path: `${P}/zones/{zone_id}`, summary: 'Rename a zone, change its description or kind', access: 'member', feature,
      params: s.zoneParams, body: s.zonePatch, response: s.zone, errors: [404, 409, 422],
      handler: async ({ params, body, caller, services }) => {
        const z0 = await zone(services.db, caller!.tenantId, params.zone_id);
        if (body.name && body.name !== z0.name && (await services.db('netsec_zones').where({ tenant_id: caller!.tenantId, name: body.name }).first('id'))) throw new Conflict(`A zone named "${body.name}" exists`, 'ZONE_EXISTS');
        await services.db('netsec_zones').where({ id: z0.id, tenant_id: caller!.tenantId }).update({ ...body, updated_at: services.clock.now().toISOString() });
        await audit(services, caller!, 'update_zone', 'zone', z0.id, body);
        return zone(services.db, caller!.tenantId, z0.id);
      },
    }),
    route({
      method: 'post', path: `${P}/zones/{zone_id}/members`, summary: 'Add members (hosts or CIDRs) to a zone', access: 'member', feature,
      params: s.zoneParams, body: s.membersBody, response: s.zone, status: 201, errors: [404, 409, 422],
      handler: async ({ params, body, caller, services }) => {
        const z0 = await zone(services.db, caller!.tenantId, params.zone_id);
        const add = [...new Set(body.members.map((m) => memberText(m)!))];
        const dup = add.filter((m) => z0.members.some((x) => x.value === m));
        if (dup.length) throw new Conflict(`Already members of ${z0.name}: ${dup.join(', ')}`, 'MEMBER_EXISTS');
        const now = services.clock.now().toISOString();
        await saveMembers(services.db, caller!.tenantId, z0.id, [...z0.members, ...add.map((value) => ({ value, added_at: now }))], now);
        await audit(services, caller!, 'add_zone_members', 'zone', z0.id, { members: add });
        return zone(services.db, caller!.tenantId, z0.id);
      },
    }),
    route({
      method: 'delete', path: `${P}/zones/{zone_id}/members/{member}`, summary: 'Remove a member (URL-encode a CIDR: 10.0.0.0%2F24)', access: 'member', feature,
      params: s.memberParams, response: s.zone, errors: [404, 422],
      handler: async ({ params, caller, services }) => {
        const z0 = await zone(services.db, caller!.tenantId, params.zone_id);
        const m = memberText(params.member);
        if (!m) throw invalid(['path', 'member'], 'an IP address or a CIDR network');
        if (!z0.members.some((x) => x.value === m)) throw new NotFound(`${m} is not a member of ${z0.name}`, 'MEMBER_NOT_FOUND');
        const now = services.clock.now().toISOString();
        await saveMembers(services.db, caller!.tenantId, z0.id, z0.members.filter((x) => x.value !== m), now);
        await audit(services, caller!, 'remove_zone_member', 'zone', z0.id, { member: m });
        return zone(services.db, caller!.tenantId, z0.id);
      },
    }),
    route({
      method: 'post', path: `${P}/policies`, summary: 'Add a policy to the draft set (active once applied)', access: 'member', feature,
      body: s.policyBody, response: s.policy, status: 201, errors: [409, 422],
      handler: async ({ body, caller, services }) => {
        const t = caller!.tenantId;
        for (const key of ['source_zone', 'destination_zone'] as const) {
          if (body[key] !== 'any' && !(await services.db('netsec_zones').where({ tenant_id: t, id: body[key] }).first('id'))) throw invalid(['body', key], 'no such zone (a zone id or "any")');
        }
        if (await services.db('netsec_policies').where({ tenant_id: t, name: body.name }).first('id')) throw new Conflict(`A policy named "${body.name}" exists`, 'POLICY_EXISTS');
        const now = services.clock.now().toISOString();
        const { name, priority, ...rest } = body;
        const row = { id: crypto.randomUUID(), tenant_id: t, name, priority, body: JSON.stringify(rest), created_at: now, updated_at: now };
        await services.db('netsec_policies').insert(row);
        await audit(services, caller!, 'create_policy', 'policy', row.id, { name, priority, ...rest });
        return policyOf(row);
      },
    }),
    route({
      method: 'get', path: `${P}/policies`, summary: 'Draft policies in evaluation order, and the active version', access: 'viewer', feature,
      response: s.policiesResponse,
      handler: async ({ caller, services }) => {
        const list = await drafts(services.db, caller!.tenantId);
        const active = await activeSet(services.db, caller!.tenantId);
        const d = diffPolicies(active?.policies ?? [], sortPolicies(list.map(strip)));
        return { policies: list, active: active ? { version: active.version, applied_at: active.created_at, policies: active.policies.length } : null, pending_changes: d.added.length + d.removed.length + d.changed.length > 0 };
      },
    }),
    route({
      method: 'post', path: `${P}/policies/simulate`, summary: 'Evaluate flows (5-tuple) first-match against the applied policy set, with the evaluation path', access: 'viewer', feature,
      body: s.simulateBody, response: s.simulateResponse, errors: [404, 409, 422],
      handler: async ({ body, caller, services }) => {
        const t = caller!.tenantId;
        let set: { version: number; policies: Policy[] } | null;
        if (body.version) {
          const r = await services.db('netsec_policy_sets').where({ tenant_id: t, version: body.version }).first();
          if (!r) throw new NotFound(`Policy set version ${body.version} not found`, 'VERSION_NOT_FOUND');
          set = { version: Number(r.version), policies: JSON.parse(r.policies) };
        } else set = await activeSet(services.db, t);
        if (!set) throw new StateConflict('no_policy_set', ['apply'], 'No policy set has been applied yet: apply the policies first');
        const zs = await zones(services.db, t);
        const results = body.flows.map((f) => {
          const d = evaluate(zs, set!.policies, f);
          return { flow: f, action: d.action, matched_policy: d.matched_policy && { id: d.matched_policy.id, name: d.matched_policy.name, priority: d.matched_policy.priority }, source_zones: d.source_zones, destination_zones: d.destination_zones, path: d.path };
        });
        return { version: set.version, results, method: 'quarantine zones deny first; then policies by priority (lower first), first match wins; zones resolved by CIDR containment of current members; no match is an implicit deny' };
      },
    }),
    route({
      method: 'post', path: `${P}/policies/apply`, summary: 'Activate the draft policies as a new version (or roll back to an earlier version), with the diff', access: 'operator', feature,
      body: s.applyBody, response: s.applyResponse, errors: [404, 409, 422],
      handler: async ({ body, caller, services }) => {
        const t = caller!.tenantId;
        const now = services.clock.now().toISOString();
        const active = await activeSet(services.db, t);
        let next: Policy[];
        if (body.rollback_to) {
          const r = await services.db('netsec_policy_sets').where({ tenant_id: t, version: body.rollback_to }).first();
          if (!r) throw new NotFound(`Policy set version ${body.rollback_to} not found`, 'VERSION_NOT_FOUND');
          next = JSON.parse(r.policies);
        } else next = sortPolicies((await drafts(services.db, t)).map(strip));
        const diff = diffPolicies(active?.policies ?? [], next);
        if (active && !diff.added.length && !diff.removed.length && !diff.changed.length) throw new StateConflict('applied', [], `Version ${active.version} already holds these policies`);
        const version = (active ? Number((await services.db('netsec_policy_sets').where({ tenant_id: t }).max({ v: 'version' }).first())?.v) : 0) + 1;
        await services.db.transaction(async (trx) => {
          await trx('netsec_policy_sets').where({ tenant_id: t, active: true }).update({ active: false });
          await trx('netsec_policy_sets').insert({ id: crypto.randomUUID(), tenant_id: t, version, active: true, policies: JSON.stringify(next), diff: JSON.stringify(diff), applied_by: caller!.id, created_at: now });
          if (body.rollback_to) {
            // The drafts become the rolled-back set, so that the next apply starts from it.
            await trx('netsec_policies').where({ tenant_id: t }).delete();
            for (const { id, name, priority, ...rest } of next) await trx('netsec_policies').insert({ id, tenant_id: t, name, priority, body: JSON.stringify(rest), created_at: now, updated_at: now });
          }
        });
        const action = await services.sec.recordAction({ tenant_id: t, action: body.rollback_to ? 'rollback_policy_set' : 'apply_policy_set', target_type: 'policy_set', target_id: String(version), trigger: 'operator', actor: caller!.id, result: 'succeeded', detail: { added: diff.added.length, removed: diff.removed.length, changed: diff.changed.length, previous_version: active?.version ?? null } });
        return { version, previous_version: active?.version ?? null, policies: next, diff, action_id: action.id };
      },
    }),
  ];
}

