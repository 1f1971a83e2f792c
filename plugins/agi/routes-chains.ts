import { z } from 'zod';
import type { RouteMaker } from '../../core/plugin';
import type { Deps } from './deps';
import { analyze, graphOf, replay } from './reasoning';
import { agentSchema, chainSchema, chainsPage, page } from './schemas';

const chainParams = z.object({ chain_id: z.uuid() });
const agentParams = z.object({ agent_id: z.string().min(1).max(64) });
const rec = z.record(z.string(), z.unknown());

export const chainRoutes = (route: RouteMaker<Deps>) => [
  route({
    method: 'get',
    path: '/insight_chains',
    summary: "The tenant's insight chains (observations → inferences → recommendation → decision → outcome), newest first",
    access: 'viewer',
    feature: 'agi',
    query: z.object({ agent_id: z.string().max(64).optional(), topic: z.string().max(64).optional(), ...page }),
    response: chainsPage,
    errors: [422],
    handler: async ({ query, caller, services }) => {
      const { items, next_cursor } = await services.insights.list(caller!.tenantId, query);
      return { insight_chains: items, next_cursor };
    },
  }),
  route({
    method: 'get',
    path: '/insight_chains/{chain_id}',
    summary: 'One insight chain',
    access: 'viewer',
    feature: 'agi',
    params: chainParams,
    response: chainSchema,
    errors: [404, 422],
    handler: ({ params, caller, services }) => services.insights.get(caller!.tenantId, params.chain_id),
  }),
  route({
    method: 'get',
    path: '/insight_chains/{chain_id}/graph',
    summary: 'The chain as a directed graph: nodes (observation, inference, recommendation, decision, outcome) and edges',
    access: 'viewer',
    feature: 'agi',
    params: chainParams,
    response: z.object({ chain_id: z.string(), directed: z.boolean(), nodes: z.array(z.object({ id: z.string(), type: z.string(), label: z.string(), data: z.unknown() })), edges: z.array(z.object({ source: z.string(), target: z.string(), relation: z.string() })) }),
    errors: [404, 422],
    handler: async ({ params, caller, services }) => graphOf(await services.insights.get(caller!.tenantId, params.chain_id)),
  }),
  route({
    method: 'get',
    path: '/insight_chains/{chain_id}/replay',
    summary: "Re-measures the chain's evidence now and evaluates its rules again: would it conclude the same?",
    access: 'viewer',
    feature: 'agi',
    params: chainParams,
    response: z.object({
      chain_id: z.string(),
      method: z.string(),
      replayed_at: z.string(),
      observations: z.array(z.object({ id: z.string(), metric: z.string(), params: rec, then: z.number().nullable(), now: z.number().nullable(), replayable: z.boolean(), error: z.string().nullable() })),
      inferences: z.array(z.object({ id: z.string(), text: z.string(), rule: z.unknown(), held_then: z.boolean().nullable(), holds_now: z.boolean().nullable() })),
      concluded_then: z.boolean(),
      concludes_now: z.boolean(),
      same_conclusion: z.boolean(),
      replayable: z.number().int(),
      not_replayable: z.array(z.string()),
    }),
    errors: [404, 422],
    handler: async ({ params, caller, services }) => replay(await services.insights.get(caller!.tenantId, params.chain_id), services.kpis),
  }),
  route({
    method: 'get',
    path: '/insight_chains/{chain_id}/analyze',
    summary: 'Which evidence carried the conclusion (rule margins), and how the outcome compared with the prediction',
    access: 'viewer',
    feature: 'agi',
    params: chainParams,
    response: z.object({
      chain_id: z.string(),
      method: z.string(),
      evidence: z.array(z.object({ observation: z.string(), metric: z.string(), value: z.number().nullable(), rules: z.array(z.unknown()), margin: z.number().nullable(), role: z.enum(['context', 'supporting', 'decisive']) })),
      decisive: z.array(z.string()),
      missing_evidence: z.array(z.string()),
      prediction: z.unknown(),
      outcome: z.unknown(),
      comparison: z.object({ error: z.number().nullable(), relative_error: z.number().nullable(), within_10_percent: z.boolean().nullable() }).nullable(),
    }),
    errors: [404, 422],
    handler: async ({ params, caller, services }) => analyze(await services.insights.get(caller!.tenantId, params.chain_id)),
  }),
  route({
    method: 'get',
    path: '/agents',
    summary: "The platform's agents (cognitive loop, AKO, copilot) and the tenant's generated agents",
    access: 'viewer',
    feature: 'agi',
    response: z.object({ agents: z.array(agentSchema), next_cursor: z.string().nullable() }),
    handler: async ({ caller, services }) => ({ agents: await services.insights.agents(caller!.tenantId), next_cursor: null }),
  }),
  route({
    method: 'get',
    path: '/agents/{agent_id}',
    summary: 'One agent with its permissions and history (chains written, actions recorded under its name)',
    access: 'viewer',
    feature: 'agi',
    params: agentParams,
    response: agentSchema.extend({ history: z.object({ insight_chains: z.number().int(), last_chain_at: z.string().nullable(), actions_recorded: z.number().int(), last_action_at: z.string().nullable() }) }),
    errors: [404],
    handler: async ({ params, caller, services }) => {
      const agent = await services.insights.agent(caller!.tenantId, params.agent_id);
      const chains = (await services.db('agi_chains').where({ tenant_id: caller!.tenantId, agent_id: agent.id }).count({ n: '*' }).max({ last: 'created_at' }).first()) as { n: unknown; last: string | null };
      // Actions are recorded under the agent's service identity (agent:<id>); AKO records as `ako`.
      const actors = [`agent:${agent.id}`, agent.id];
      const q = services.db('actions').whereIn('actor', actors);
      if (agent.tenant_id) q.andWhere('tenant_id', agent.tenant_id);
      const acts = (await q.count({ n: '*' }).max({ last: 'created_at' }).first()) as { n: unknown; last: string | null };
      return { ...agent, history: { insight_chains: Number(chains?.n ?? 0), last_chain_at: chains?.last ?? null, actions_recorded: Number(acts?.n ?? 0), last_action_at: acts?.last ?? null } };
    },
  }),
  route({
    method: 'get',
    path: '/agents/{agent_id}/insight_chains',
    summary: "The insight chains an agent wrote for the tenant, newest first",
    access: 'viewer',
    feature: 'agi',
    params: agentParams,
    query: z.object(page),
    response: chainsPage,
    errors: [404, 422],
    handler: async ({ params, query, caller, services }) => {
      await services.insights.agent(caller!.tenantId, params.agent_id);
      const { items, next_cursor } = await services.insights.list(caller!.tenantId, { ...query, agent_id: params.agent_id });
      return { insight_chains: items, next_cursor };
    },
  }),
];
