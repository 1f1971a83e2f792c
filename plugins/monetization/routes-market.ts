import crypto from 'node:crypto';
import { z } from 'zod';
import { invalid, NotFound, StateConflict } from '../../core/errors';
import { pageOf } from '../../core/pagination';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { namedTenantScope, tenantScope } from '../../core/tenancy';
import { skus, skuSchema } from './catalogue';
import type { Deps } from './index';
import { ITEM_STATES, itemView, runView, toItem, type Step } from './marketplace';
import { parseAmount } from './money';
import { idempotencyKey, page } from './routes-account';
import { svc, tenantMustExist } from './shared';

const itemParams = z.object({ item_id: z.uuid() });

export function marketRoutes(route: RouteMaker<Deps>): RouteDef[] {
  return [
    route({
      method: 'get',
      path: '/monetization/products/skus',
      summary: 'The catalogue: every plan and add-on as a SKU with its monthly price, features and metered unit prices',
      access: 'viewer',
      response: z.object({ skus: z.array(skuSchema), currency: z.string() }),
      handler: ({ services }) => ({ skus: skus(services.config), currency: services.config.billing.currency }),
    }),
    route({
      method: 'post',
      path: '/monetization/products/subscribe',
      summary: "Subscribe a tenant to a SKU: a plan SKU changes its plan, an add-on SKU adds the add-on (active: false ends it); prorated on the invoice",
      description: 'Members subscribe their own tenant; admins any tenant. The new plan, its request budget and features apply at once.',
      access: 'member',
      body: z.strictObject({ sku: z.string().min(1).max(64), tenant_id: z.string().min(1).max(64).optional(), active: z.boolean().default(true) }),
      response: z.object({ tenant_id: z.string(), sku: z.string(), kind: z.enum(['plan', 'addon']), plan: z.string(), previous_plan: z.string(), addons: z.array(z.string()), effective_at: z.string() }),
      errors: [404, 409, 422],
      handler: async ({ body, caller, services }) => {
        const scope = namedTenantScope(services.db, caller!, body.tenant_id ?? caller!.tenantId);
        await tenantMustExist(services.db, scope.tenantId);
        const sku = skus(services.config).find((s) => s.sku === body.sku);
        if (!sku) throw invalid(['body', 'sku'], `unknown SKU; known: ${skus(services.config).map((s) => s.sku).join(', ')}`);
        const t = await services.db('tenants').where({ id: scope.tenantId }).first('plan');
        const at = services.clock.now().toISOString();
        if (sku.kind === 'plan') {
          if (!body.active) throw invalid(['body', 'active'], 'a plan is changed by subscribing to another plan, not ended');
          if (t.plan === sku.name) throw new StateConflict(t.plan, [], `The tenant is already on the ${sku.name} plan`);
          await services.db('tenants').where({ id: scope.tenantId }).update({ plan: sku.name });
          services.limits.planChanged(scope.tenantId);
          services.features.planChanged(scope.tenantId);
          await services.actions.record({ source: 'manual', actor: caller!.id, action: 'subscribe_plan', target_type: 'tenant', target_id: scope.tenantId, result: 'succeeded', tenant_id: scope.tenantId, detail: { from: t.plan, to: sku.name } });
        } else {
          const had = (await services.features.entitlements(scope.tenantId))!.addons.includes(sku.name);
          if (had === body.active) throw new StateConflict(had ? 'active' : 'inactive', [had ? 'end' : 'add'], `The add-on ${sku.name} is already ${had ? 'active' : 'inactive'}`);
          await services.features.setAddon(scope.tenantId, sku.name, body.active, at);
          await services.actions.record({ source: 'manual', actor: caller!.id, action: body.active ? 'add_addon' : 'end_addon', target_type: 'tenant', target_id: scope.tenantId, result: 'succeeded', tenant_id: scope.tenantId, detail: { addon: sku.name } });
        }
        const after = (await services.features.entitlements(scope.tenantId))!;
        return { tenant_id: scope.tenantId, sku: sku.sku, kind: sku.kind, plan: after.plan, previous_plan: t.plan, addons: after.addons, effective_at: at };
      },
    }),
    route({
      method: 'get',
      path: '/monetization/marketplace/items',
      summary: "Marketplace items, newest first: every published item, the caller's own in any state, and (admins) everything",
      access: 'viewer',
      query: z.object({ state: z.enum(ITEM_STATES).optional(), kind: z.enum(['workflow', 'kernel_task']).optional(), ...page }),
      response: z.object({ items: z.array(itemView), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const q = services.db('marketplace_items');
        if (caller!.role !== 'admin') q.where((w) => w.where('state', 'published').orWhere('tenant_id', caller!.tenantId));
        if (query.state) q.where('state', query.state);
        if (query.kind) q.where('kind', query.kind);
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        return { items: items.map((r) => toItem(r, services.config.billing.currencies)), next_cursor };
      },
    }),
    route({
      method: 'post',
      path: '/monetization/marketplace/publish',
      summary: 'Offer a workflow or a kernel task on the marketplace at a price per run; it starts as a draft until an admin reviews it',
      description: "A workflow item fixes the workflow's steps as they are now; a kernel task item runs one task with `input` (callers may override its fields).",
      access: 'member',
      body: z.discriminatedUnion('kind', [
        z.strictObject({ kind: z.literal('workflow'), workflow_id: z.uuid(), name: z.string().trim().min(1).max(200), description: z.string().max(4000).default(''), price_per_run: z.union([z.number(), z.string().max(40)]) }),
        z.strictObject({
          kind: z.literal('kernel_task'), kernel: z.string().min(1).max(64), task: z.string().min(1).max(64), input: z.record(z.string(), z.unknown()).default({}),
          name: z.string().trim().min(1).max(200), description: z.string().max(4000).default(''), price_per_run: z.union([z.number(), z.string().max(40)]),
        }),
      ]),
      response: itemView,
      status: 201,
      errors: [404, 422],
      handler: async ({ body, caller, services }) => {
        const cur = services.config.billing.currency;
        const price = parseAmount(body.price_per_run, services.config.billing.currencies[cur] ?? 2, ['body', 'price_per_run']);
        if (price < 0) throw invalid(['body', 'price_per_run'], 'must not be negative');
        let steps: Step[];
        if (body.kind === 'workflow') {
          // Another tenant's workflow is 404.
          const def = await services.workflows.definition(caller!, body.workflow_id);
          steps = (def.steps as Step[]).map((s) => ({ id: s.id, kernel: s.kernel, task: s.task, input: s.input }));
          if (!steps.length) throw invalid(['body', 'workflow_id'], 'the workflow has no steps');
        } else {
          try {
            services.mesh.kernelOf(body.kernel);
          } catch {
            throw invalid(['body', 'kernel'], `unknown kernel; known: ${services.mesh.kernels().map((k) => k.id).join(', ')}`);
          }
          if (!services.mesh.kernel(body.kernel).tasks.includes(body.task)) throw invalid(['body', 'task'], `unknown task of kernel ${body.kernel}`);
          steps = [{ id: 'task', kernel: body.kernel, task: body.task, input: body.input }];
        }
        const now = services.clock.now().toISOString();
        const row = {
          id: crypto.randomUUID(), kind: body.kind, name: body.name, description: body.description, workflow_id: body.kind === 'workflow' ? body.workflow_id : null,
          kernel: body.kind === 'kernel_task' ? body.kernel : null, task: body.kind === 'kernel_task' ? body.task : null, steps: JSON.stringify(steps), price_per_run: price, currency: cur,
          state: 'draft', review_note: null, reviewed_by: null, created_by: caller!.id, created_at: now, updated_at: now, published_at: null,
        };
        await tenantScope(services.db, caller!).insert('marketplace_items', row);
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'publish_item', target_type: 'marketplace_item', target_id: row.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: { name: row.name, price } });
        return toItem({ ...row, tenant_id: caller!.tenantId }, services.config.billing.currencies);
      },
    }),
    route({
      method: 'post',
      path: '/monetization/marketplace/items/{item_id}/review',
      summary: 'Review a draft item (admins, beyond the spec): publish or reject it',
      access: 'admin',
      params: itemParams,
      body: z.strictObject({ decision: z.enum(['publish', 'reject']), note: z.string().max(500).optional() }),
      response: itemView,
      errors: [404, 409, 422],
      handler: async ({ params, body, caller, services }) => {
        const row = await services.db('marketplace_items').where({ id: params.item_id }).first();
        if (!row) throw new NotFound('Marketplace item not found');
        if (row.state !== 'draft') throw new StateConflict(row.state, [], `Only a draft can be reviewed; this item is ${row.state}`);
        const now = services.clock.now().toISOString();
        const patch = { state: body.decision === 'publish' ? 'published' : 'rejected', review_note: body.note ?? null, reviewed_by: caller!.id, updated_at: now, published_at: body.decision === 'publish' ? now : null };
        const n = await services.db('marketplace_items').where({ id: row.id, state: 'draft' }).update(patch);
        if (!n) throw new StateConflict('reviewed', [], 'The item was reviewed meanwhile');
        await services.actions.record({ source: 'manual', actor: caller!.id, action: `review_item_${body.decision}`, target_type: 'marketplace_item', target_id: row.id, result: 'succeeded', tenant_id: row.tenant_id });
        return toItem({ ...row, ...patch }, services.config.billing.currencies);
      },
    }),
    route({
      method: 'post',
      path: '/monetization/v1/public/workflows/{workflow_id}/execute',
      summary: "Run a published marketplace workflow (or task item, by its id) for the caller, typically an API key; it is metered and charged to the caller's tenant",
      description:
        'Runs every step on the kernels now and answers the result (200, state succeeded or failed). A succeeded run is charged its price: one ledger ' +
        "transaction debits the caller's receivable and credits the publisher's share (config billing.publisherShareBps) and the platform's. " +
        'A failed run is not charged. With an Idempotency-Key header a retry answers the first run.',
      access: 'member',
      feature: 'api',
      params: z.object({ workflow_id: z.uuid() }),
      body: z.strictObject({ input: z.record(z.string(), z.unknown()).optional() }),
      response: runView,
      errors: [400, 403, 404, 422],
      handler: async ({ params, body, caller, req, services }) => {
        const key = idempotencyKey(req.get('idempotency-key') ?? undefined);
        const runner = svc(services).runner;
        const item = await runner.findPublished(params.workflow_id);
        const prior = key ? await runner.priorRun(caller!.tenantId, key) : null;
        const run = prior ?? (await runner.run(item, caller!, body.input, key));
        if (!prior) await services.actions.record({ source: 'manual', actor: caller!.id, action: 'public_execute', target_type: 'marketplace_item', target_id: item.id, result: run.state === 'succeeded' ? 'succeeded' : 'failed', tenant_id: caller!.tenantId, detail: { run_id: run.run_id, charged: run.charged.amount } });
        return { ...run, workflow_id: item.workflow_id ?? null };
      },
    }),
  ];
}
