import { z } from 'zod';
import { AGENT_KINDS, DECISION_STATES } from '../../core/contracts/insights';

export const page = {
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().min(1).max(512).optional(),
};
export const pageQuery = z.object(page);

const rec = z.record(z.string(), z.unknown());
const op = z.enum(['>', '>=', '<', '<=']);

export const chainSchema = z.object({
  id: z.string(),
  tenant_id: z.string(),
  agent_id: z.string(),
  topic: z.string(),
  summary: z.string(),
  observations: z.array(z.object({ id: z.string(), metric: z.string(), params: rec, value: z.number().nullable(), detail: z.unknown().optional(), at: z.string() })),
  inferences: z.array(z.object({ id: z.string(), text: z.string(), from: z.array(z.string()), rule: z.object({ observation: z.string(), op, threshold: z.number() }).nullable().optional() })),
  recommendation: z.object({ action: z.string(), target: z.string().nullable(), params: rec, text: z.string(), prediction: z.object({ metric: z.string(), params: rec, value: z.number() }).nullable().optional() }).nullable(),
  decision: z.object({ state: z.enum(DECISION_STATES), by: z.string().nullable(), at: z.string(), approval_id: z.string().nullable().optional(), detail: z.unknown().optional() }),
  outcome: z.object({ metric: z.string(), value: z.number().nullable(), predicted: z.number().nullable(), error: z.number().nullable(), measured_at: z.string() }).nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const chainsPage = z.object({ insight_chains: z.array(chainSchema), next_cursor: z.string().nullable() });

export const agentSchema = z.object({
  id: z.string(),
  tenant_id: z.string().nullable(),
  name: z.string(),
  kind: z.enum(AGENT_KINDS),
  description: z.string(),
  role: z.enum(['viewer', 'member', 'operator']),
  permissions: z.array(z.string()),
  state: z.enum(['active', 'stopped']),
  created_at: z.string(),
  updated_at: z.string(),
});

export const loopSchema = z.object({
  id: z.string(),
  tenant_id: z.string(),
  state: z.enum(['running', 'stopped']),
  interval_seconds: z.number().int(),
  window_seconds: z.number().int(),
  started_by: z.string(),
  stopped_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const objectiveSchema = z.object({ id: z.string(), kpi: z.string(), scope: z.string(), target: z.string(), value: z.number().nullable(), status: z.enum(['met', 'unmet', 'no_data']) });
export const plannedSchema = z.object({ objective: z.string(), kind: z.string(), target: z.string(), params: rec, reason: z.string(), chain_id: z.string(), status: z.string(), approval_id: z.string().nullable() });

export const iterationSchema = z.object({
  id: z.string(),
  loop_id: z.string().nullable(),
  tenant_id: z.string(),
  trigger: z.enum(['schedule', 'manual']),
  kpis: z.unknown(),
  objectives: z.array(objectiveSchema),
  decisions: z.array(plannedSchema),
  error: z.string().nullable(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});
