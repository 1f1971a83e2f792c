import crypto from 'node:crypto';
import { z } from 'zod';
import type { Db } from '../../core/db';
import { invalid } from '../../core/errors';
import { toMicros } from '../../core/money';
import { pageOf } from '../../core/pagination';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { tenantScope } from '../../core/tenancy';
import type { Deps } from './deps';
import { parse } from './store';

const decimal = z.union([z.number().min(0), z.string().regex(/^\d{1,12}(\.\d{1,6})?$/, 'a decimal amount')]).transform((v) => String(v));
const ids = z.array(z.string().min(1).max(64)).min(1).max(100);

export const placementRules = z
  .object({
    allowed_providers: ids.optional(),
    allowed_regions: ids.optional(),
    /** Regions whose declared data residency is one of these. */
    residency: ids.optional(),
    /** Largest cost of one unit (a task of median length) at the provider's price. */
    max_cost_per_unit: decimal.optional(),
  })
  .refine((r) => Object.keys(r).length > 0, { message: 'a placement policy needs at least one rule' });
export type PlacementRules = z.output<typeof placementRules>;

export const valueRules = z.object({
  /** What one unit of this workload is worth. */
  value_per_unit: decimal,
  currency: z.string().regex(/^[A-Z]{3}$/).default('USD'),
  /** Worth at least this a unit: the router optimises latency; below it, cost. */
  latency_above: decimal,
});
export type ValueRules = z.output<typeof valueRules>;

const workloadType = z.string().min(1).max(64).regex(/^[a-z][a-z0-9_-]*$/, 'lowercase letters, digits, _ and -');
const placementBody = z.object({ name: z.string().min(1).max(200), workload_type: workloadType.optional(), rules: placementRules });
const valueBody = z.object({ name: z.string().min(1).max(200), workload_type: workloadType }).and(valueRules);

const policyOut = z.object({ id: z.string(), tenant_id: z.string(), kind: z.string(), name: z.string(), workload_type: z.string().nullable(), rules: z.record(z.string(), z.unknown()), created_by: z.string(), created_at: z.string() });
const page = { limit: z.coerce.number().int().min(1).max(500).default(100), cursor: z.string().min(1).max(512).optional() };
const view = (r: Record<string, any>) => ({ id: r.id, tenant_id: r.tenant_id, kind: r.kind, name: r.name, workload_type: r.workload_type ?? null, rules: parse(r.rules), created_by: r.created_by, created_at: r.created_at });

/** The tenant's placement policies that apply to a workload type (those without a type apply to all). */
export async function placementFor(db: Db, tenantId: string, type: string): Promise<Array<{ name: string; rules: PlacementRules }>> {
  const rows = await db('uaicp_policies').where({ tenant_id: tenantId, kind: 'placement' }).andWhere((w) => w.whereNull('workload_type').orWhere('workload_type', type));
  return rows.map((r: Record<string, any>) => ({ name: r.name, rules: parse(r.rules) }));
}

/** The newest value policy of a workload type, or null. */
export async function valueFor(db: Db, tenantId: string, type: string): Promise<(ValueRules & { name: string }) | null> {
  const r = await db('uaicp_policies').where({ tenant_id: tenantId, kind: 'value', workload_type: type }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).first();
  return r ? { name: r.name, ...parse(r.rules) } : null;
}

function policyRoutes(route: RouteMaker<Deps>, kind: 'placement' | 'value', path: string, what: string, body: z.ZodType): RouteDef<Deps>[] {
  return [
    route({
      method: 'get',
      path,
      summary: `The tenant's ${what}, newest first`,
      access: 'viewer',
      feature: 'aiops',
      query: z.object({ workload_type: z.string().max(64).optional(), ...page }),
      response: z.object({ policies: z.array(policyOut), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const q = tenantScope(services.db, caller!).select('uaicp_policies').where('kind', kind);
        if (query.workload_type) q.where('workload_type', query.workload_type);
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        return { policies: items.map(view), next_cursor };
      },
    }),
    route({
      method: 'post',
      path,
      summary: `Create one of the ${what}; the workload router applies it from the next request on`,
      access: 'member',
      feature: 'aiops',
      body,
      response: policyOut,
      status: 201,
      errors: [422],
      handler: async ({ body: b, caller, services }) => {
        const { name, workload_type, rules, ...rest } = b as { name: string; workload_type?: string; rules?: Record<string, unknown> } & Record<string, unknown>;
        const stored = kind === 'placement' ? rules! : rest;
        if (kind === 'value') {
          const v = stored as ValueRules;
          toMicros(v.value_per_unit, ['body', 'value_per_unit']);
          toMicros(v.latency_above, ['body', 'latency_above']);
        } else if ((stored as PlacementRules).allowed_providers) {
          const known = services.compute.providers().map((p) => p.id);
          const bad = (stored as PlacementRules).allowed_providers!.filter((p) => !known.includes(p));
          if (bad.length) throw invalid(['body', 'rules', 'allowed_providers'], `unknown providers ${bad.join(', ')}; known: ${known.join(', ')}`);
        }
        const row = { id: crypto.randomUUID(), kind, name, workload_type: workload_type ?? null, rules: JSON.stringify(stored), created_by: caller!.id, created_at: services.clock.now().toISOString() };
        await tenantScope(services.db, caller!).insert('uaicp_policies', row);
        await services.actions.record({ source: 'manual', actor: caller!.id, action: `create_${kind}_policy`, target_type: 'policy', target_id: row.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: { name, workload_type: row.workload_type } });
        return view({ ...row, tenant_id: caller!.tenantId });
      },
    }),
  ];
}

export function allPolicyRoutes(route: RouteMaker<Deps>): RouteDef<Deps>[] {
  return [
    ...policyRoutes(route, 'placement', '/policies', 'placement policies (allowed providers and regions, data residency, max cost per unit)', placementBody),
    ...policyRoutes(route, 'value', '/value/policies', 'value-based routing policies (value per unit of a workload type: cheaper placement for low value, faster for high)', valueBody),
  ];
}
