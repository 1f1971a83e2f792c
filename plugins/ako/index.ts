import crypto from 'node:crypto';
import { z } from 'zod';
import { nowIso, type Migration } from '../../core/db';
import { Conflict, HttpError, NotFound } from '../../core/errors';
import type { ActionActor } from '../../core/mesh/types';
import { pageOf } from '../../core/pagination';
import { PLATFORM_TENANT } from '../../core/auth/store';
import { insightsRef, type Decision } from '../../core/contracts/insights';
import { definePlugin, optional } from '../../core/plugin';
import { core, type Services } from '../../core/services';
import { measure, propose, type Proposal } from './analysis';
import { chainOf } from './chain';

const STATUSES = ['proposed', 'applied', 'failed', 'superseded'] as const;
const ACTIONS = ['add_node', 'remove_node', 'drain_node', 'set_threads'] as const;

// Proposals are about the shared mesh, not a tenant's data: the table has no tenant_id.
const migrations: Migration[] = [
  {
    name: '001_ako_actions',
    async up(db) {
      await db.schema.createTable('ako_actions', (t) => {
        t.string('id', 36).primary();
        t.string('kernel_id', 64).notNullable();
        t.string('action', 32).notNullable();
        t.string('target_type', 16).notNullable();
        t.string('target_id', 128).notNullable();
        t.text('params').notNullable();
        t.text('reason').notNullable();
        t.text('evidence').notNullable();
        t.text('thresholds').notNullable();
        t.string('status', 16).notNullable();
        t.string('created_at', 32).notNullable();
        t.string('applied_at', 32);
        t.string('applied_by', 128);
        t.text('result');
        t.text('error');
        t.index(['status', 'created_at']);
      });
    },
  },
  {
    // The insight chain that records the proposal's reasoning (plugin agi), when one was written.
    name: '002_ako_chain',
    async up(db) {
      await db.schema.alterTable('ako_actions', (t) => {
        t.string('chain_id', 36);
      });
    },
  },
];

const proposalView = z.object({
  id: z.string(),
  kernel_id: z.string(),
  action: z.enum(ACTIONS),
  target_type: z.enum(['kernel', 'node']),
  target_id: z.string(),
  params: z.record(z.string(), z.unknown()),
  reason: z.string(),
  evidence: z.record(z.string(), z.unknown()),
  thresholds: z.record(z.string(), z.unknown()),
  status: z.enum(STATUSES),
  created_at: z.string(),
  applied_at: z.string().nullable(),
  applied_by: z.string().nullable(),
  result: z.unknown(),
  error: z.string().nullable(),
  chain_id: z.string().nullable().describe('The insight chain of this proposal (GET /agi/insight_chains/{id}); null without the agi plugin'),
});
type View = z.output<typeof proposalView>;

function toView(r: Record<string, any>): View {
  const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : null);
  return { ...r, params: json(r.params), evidence: json(r.evidence), thresholds: json(r.thresholds), result: json(r.result), applied_at: r.applied_at ?? null, applied_by: r.applied_by ?? null, error: r.error ?? null, chain_id: r.chain_id ?? null } as View;
}

/** Performs a proposal on the mesh; the mesh records each control action it does. */
async function perform(services: Pick<Services, 'db' | 'mesh' | 'actions' | 'config'>, p: View, actor: ActionActor): Promise<unknown> {
  const mesh = services.mesh;
  switch (p.action) {
    case 'add_node':
      return mesh.addNode(p.kernel_id, actor, p.params.threads as number | undefined);
    case 'drain_node':
      return mesh.drainNode(p.target_id, {}, actor);
    case 'set_threads':
      return mesh.setThreads(p.target_id, p.params.threads as number, actor);
    case 'remove_node': {
      // A node is removed once drained; one with tasks in flight stays draining (409).
      if (mesh.node(p.target_id).state !== 'drained') {
        if (mesh.node(p.target_id).state !== 'draining') await mesh.drainNode(p.target_id, {}, actor);
        await mesh.completeDrain(p.target_id, {}, actor);
      }
      await mesh.removeNode(p.target_id, actor);
      return { removed: p.target_id };
    }
  }
}

const applying = new Set<string>();

export default definePlugin({
  id: 'ako',
  prefix: '/ops/ako',
  deps: { db: core.db, mesh: core.mesh, actions: core.actions, config: core.config, insights: optional(insightsRef) },
  migrations,
  routes: (route) => [
    route({
      method: 'post',
      path: '/recompute',
      summary: 'Measure every kernel and propose actions (earlier open proposals are superseded)',
      access: 'operator',
      response: z.object({ computed_at: z.string(), window_seconds: z.number(), superseded: z.number().int(), kernels: z.array(z.record(z.string(), z.unknown())), proposals: z.array(proposalView) }),
      handler: async ({ caller, services }) => {
        const cfg = services.config.ako;
        const figures = await measure(services, cfg);
        const proposals: Proposal[] = figures.flatMap((k) => propose(k, cfg));
        const at = nowIso();
        const rows = proposals.map((p) => ({ id: crypto.randomUUID(), ...p, params: JSON.stringify(p.params), evidence: JSON.stringify(p.evidence), thresholds: JSON.stringify(p.thresholds), status: 'proposed', created_at: at }));
        const old = await services.db('ako_actions').where('status', 'proposed').whereNotNull('chain_id').pluck('chain_id');
        const superseded = await services.db.transaction(async (trx) => {
          const n = await trx('ako_actions').where('status', 'proposed').update({ status: 'superseded' });
          if (rows.length) await trx('ako_actions').insert(rows);
          return n;
        });
        const chains = services.insights;
        if (chains) {
          for (const id of old) await chains.decide(id, { state: 'expired', by: null, at, detail: 'superseded by a later recompute' });
          for (const [i, row] of rows.entries()) {
            const chain = await chains.record(chainOf(proposals[i], figures.find((k) => k.kernel_id === proposals[i].kernel_id)!, cfg, PLATFORM_TENANT, at));
            await services.db('ako_actions').where({ id: row.id }).update({ chain_id: chain.id });
            Object.assign(row, { chain_id: chain.id });
          }
        }
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'ako_recompute', target_type: 'mesh', target_id: 'ako', result: 'succeeded', detail: { proposals: rows.map((r) => ({ id: r.id, action: r.action, target_id: r.target_id })), superseded } });
        return { computed_at: at, window_seconds: cfg.windowSeconds, superseded, kernels: figures as unknown as Array<Record<string, unknown>>, proposals: rows.map(toView) };
      },
    }),
    route({
      method: 'get',
      path: '/actions',
      summary: 'AKO proposals, newest first, with their evidence, thresholds and status',
      access: 'viewer',
      query: z.object({
        status: z.enum(STATUSES).optional(),
        kernel_id: z.string().regex(/^[a-z][a-z0-9-]*$/).max(64).optional(),
        limit: z.coerce.number().int().min(1).max(500).default(100),
        cursor: z.string().min(1).max(512).optional(),
      }),
      response: z.object({ actions: z.array(proposalView), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: async ({ query, services }) => {
        const q = services.db('ako_actions');
        if (query.status) q.where('status', query.status);
        if (query.kernel_id) q.where('kernel_id', query.kernel_id);
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        return { actions: items.map((r) => toView(r as never)), next_cursor };
      },
    }),
    route({
      method: 'post',
      path: '/actions/{action_id}/apply',
      summary: 'Apply a proposal on the mesh (beyond the spec); 409 when applied or superseded',
      access: 'operator',
      params: z.object({ action_id: z.uuid() }),
      response: proposalView,
      errors: [404, 409],
      handler: async ({ params, caller, services }) => {
        const row = await services.db('ako_actions').where({ id: params.action_id }).first();
        if (!row) throw new NotFound('AKO action not found');
        const p = toView(row);
        if (p.status === 'applied' || p.status === 'superseded') throw new Conflict(`AKO action ${p.id} is ${p.status}; only proposed or failed actions can be applied`);
        if (applying.has(p.id)) throw new Conflict(`AKO action ${p.id} is being applied`);
        applying.add(p.id);
        // The chain learns the decision; an applied change's prediction is measured at once.
        const decide = async (v: View, d: Decision) => {
          if (!services.insights || !v.chain_id) return;
          await services.insights.decide(v.chain_id, d);
          if (d.state === 'applied') await services.insights.settle(v.chain_id);
        };
        try {
          const actor: ActionActor = { source: 'manual', actor: caller!.id, cause: `ako:${p.id}: ${p.reason}`.slice(0, 500) };
          const record = (result: 'succeeded' | 'failed' | 'refused', detail: Record<string, unknown>) =>
            services.actions.record({ source: 'manual', actor: caller!.id, action: 'apply_ako_action', target_type: p.target_type, target_id: p.target_id, cause: `ako:${p.id}`, result, detail: { ako_action: p.action, ...detail } });
          try {
            const result = await perform(services, p, actor);
            await services.db('ako_actions').where({ id: p.id }).update({ status: 'applied', applied_at: nowIso(), applied_by: caller!.id, result: JSON.stringify(result ?? null), error: null });
            await record('succeeded', { params: p.params });
            await decide(p, { state: 'applied', by: caller!.id, at: nowIso() });
          } catch (err) {
            const status = err instanceof HttpError ? err.status : 503;
            const detail = err instanceof HttpError ? err.detail : (err as Error).message;
            await services.db('ako_actions').where({ id: p.id }).update({ status: 'failed', applied_at: nowIso(), applied_by: caller!.id, error: typeof detail === 'string' ? detail : JSON.stringify(detail) });
            await record(status === 409 ? 'refused' : 'failed', { status, error: detail });
            await decide(p, { state: 'failed', by: caller!.id, at: nowIso(), detail });
            // The proposal exists; a target that no longer does is a conflict of state, not a 404.
            if (err instanceof NotFound) throw new Conflict(`The target of AKO action ${p.id} no longer exists: ${String(detail)}`);
            throw err instanceof HttpError ? err : new HttpError(503, `The mesh could not apply ${p.action}: ${String(detail)}`);
          }
          return toView(await services.db('ako_actions').where({ id: p.id }).first());
        } finally {
          applying.delete(p.id);
        }
      },
    }),
  ],
});
