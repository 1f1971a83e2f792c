import { z } from 'zod';
import { executedSchema } from '../../core/contracts/governance';
import { VARIANT_STATES } from './variants';

export const page = {
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().min(1).max(512).optional(),
};
const rec = z.record(z.string(), z.unknown());
const job = z.enum(['queued', 'running', 'succeeded', 'failed']);

export const scanSchema = z.object({ id: z.string(), tenant_id: z.string(), state: job, window_seconds: z.number().int(), found: z.number().int().nullable(), error: z.string().nullable(), created_by: z.string(), created_at: z.string(), started_at: z.string().nullable(), finished_at: z.string().nullable() });
export const opportunitySchema = z.object({ id: z.string(), tenant_id: z.string(), scan_id: z.string(), kind: z.enum(['manual_sequence', 'failing_workflow', 'retried_task']), title: z.string(), evidence: rec, saving: z.object({ value: z.number(), unit: z.string(), method: z.string() }), created_at: z.string(), updated_at: z.string() });
export const skillSchema = z.object({ id: z.string(), tenant_id: z.string(), opportunity_id: z.string(), kind: z.enum(['workflow', 'actions']), name: z.string(), workflow_id: z.string().nullable(), steps: z.array(z.unknown()), inputs: z.array(z.object({ name: z.string(), description: z.string(), example: z.string().nullable() })), created_by: z.string(), created_at: z.string(), updated_at: z.string() });
export const agentBlueprintSchema = z.object({ id: z.string(), tenant_id: z.string(), skill_id: z.string(), name: z.string(), state: z.enum(['generated', 'deployed', 'stopped']), role: z.enum(['viewer', 'member', 'operator']), schedule_seconds: z.number().int(), inputs: z.record(z.string(), z.string()), runs: z.number().int(), last_run_at: z.string().nullable(), last_result: z.unknown(), created_by: z.string(), deployed_by: z.string().nullable(), deployed_at: z.string().nullable(), created_at: z.string(), updated_at: z.string() });
const step = z.object({ id: z.string(), kernel: z.string(), task: z.string(), input: z.unknown(), timeout_ms: z.number().optional(), retries: z.number().optional() });
export const variantSchema = z.object({ id: z.string(), tenant_id: z.string(), workflow_id: z.string(), state: z.enum(VARIANT_STATES), allowed_actions: z.array(z.string()), changes: z.unknown(), steps: z.array(step), baseline_steps: z.array(step), canary: z.unknown(), created_by: z.string(), created_at: z.string(), updated_at: z.string() });
export const promotedSchema = z.object({ variant: variantSchema, governance: executedSchema });
