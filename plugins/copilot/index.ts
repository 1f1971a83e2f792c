// Copilot (spec 4.14): a conversation that answers about the live platform and acts through
// its own operations (tools.ts), checked against the caller's role. Decisions and examples:
// docs/groups/autonomous.md.
import { z } from 'zod';
import { definePlugin, type Resolved } from '../../core/plugin';
import { core } from '../../core/services';
import { insightsRef, kpisRef } from '../../core/contracts/insights';
import { llmRef } from '../../core/contracts/llm';
import { workflowsRef } from '../../core/contracts/workflows';
import { chat, COPILOT_AGENT } from './chat';
import { modelClient } from './llm';
import { Conversations, copilotMigrations } from './store';

const deps = { db: core.db, mesh: core.mesh, config: core.config, clock: core.clock, kpis: kpisRef, workflows: workflowsRef, insights: insightsRef, llm: llmRef };
type Deps = Resolved<typeof deps>;

const rec = z.record(z.string(), z.unknown());
const pending = z.object({ tool: z.string(), args: rec }).nullable();
const message = z.object({ id: z.string(), role: z.enum(['user', 'assistant']), user_id: z.string().nullable(), content: z.string(), reasoning_steps: z.array(rec).nullable(), actions_taken: z.array(rec).nullable(), confidence: z.number().nullable(), chain_id: z.string().nullable(), created_at: z.string() });

function parts(s: Deps) {
  return { ctx: { db: s.db, mesh: s.mesh, config: s.config, kpis: s.kpis, workflows: s.workflows }, conversations: new Conversations(s.db), insights: s.insights, llm: modelClient(s.llm), clock: s.clock };
}

export default definePlugin({
  id: 'copilot',
  prefix: '/copilot',
  deps,
  migrations: copilotMigrations,
  start: async ({ insights }) => {
    await insights.registerAgent({ id: COPILOT_AGENT, tenant_id: null, name: 'Copilot', kind: 'copilot', description: "Answers about the live platform and acts through its operations as the user who asks (the user's role is checked for every tool call; changes need confirmation)", role: 'operator', permissions: ['list_kernels', 'node_state', 'drain_node', 'pause_node', 'resume_node', 'open_incidents', 'slo_burn', 'costs', 'run_workflow'], state: 'active' });
  },
  routes: (route) => [
    route({
      method: 'post',
      path: '/chat',
      summary: 'Ask the copilot: it answers from the live platform and acts through tools checked against your role; changes need confirmation',
      description: 'confirm: true runs a change the message asks for without asking back; a message "confirm" runs the change the copilot asked about. confidence: the intent match (no model) or exp(mean logprob) of the model answer; null when the model gives no logprobs.',
      access: 'viewer',
      feature: 'copilot',
      body: z.object({ message: z.string().trim().min(1).max(4000), conversation_id: z.uuid().optional(), confirm: z.boolean().optional() }).strict(),
      response: z.object({ response: z.string(), conversation_id: z.string(), reasoning_steps: z.array(rec), actions_taken: z.array(rec), confidence: z.number().min(0).max(1).nullable(), pending_confirmation: pending, chain_id: z.string().nullable() }),
      errors: [404, 422, 502, 503],
      handler: ({ body, caller, services }) => chat(parts(services), caller!, body),
    }),
    route({
      method: 'get',
      path: '/conversations/{conversation_id}',
      summary: 'A conversation with every message, its reasoning steps and actions (tenant-scoped)',
      access: 'viewer',
      feature: 'copilot',
      params: z.object({ conversation_id: z.uuid() }),
      response: z.object({ id: z.string(), tenant_id: z.string(), user_id: z.string(), pending_confirmation: pending, created_at: z.string(), updated_at: z.string(), messages: z.array(message) }),
      errors: [404, 422],
      handler: ({ params, caller, services }) => new Conversations(services.db).history(caller!.tenantId, params.conversation_id),
    }),
  ],
});
