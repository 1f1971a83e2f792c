import { z } from 'zod';
import { SEVERITIES } from '../../core/contracts/security';

export const severity = z.enum(SEVERITIES);
const iso = z.iso.datetime({ offset: true });
const limit = z.coerce.number().int().min(1).max(1000).default(100);

export const eventsQuery = z.object({
  tenant_id: z.string().min(1).max(64).optional(),
  kernel_id: z.string().min(1).max(64).optional(),
  severity: severity.optional(),
  category: z.string().min(1).max(64).optional(),
  since: iso.optional(),
  until: iso.optional(),
  limit,
  cursor: z.string().max(500).optional(),
});

export const event = z.object({
  id: z.string(),
  tenant_id: z.string().nullable(),
  source: z.string(),
  category: z.string(),
  severity,
  actor: z.string().nullable(),
  address: z.string().nullable(),
  kernel_id: z.string().nullable(),
  attributes: z.record(z.string(), z.unknown()),
  created_at: z.string(),
});

export const findingsQuery = z.object({
  tenant_id: z.string().min(1).max(64).optional(),
  state: z.enum(['open', 'acknowledged', 'resolved']).optional(),
  severity: severity.optional(),
  rule_id: z.string().max(64).optional(),
  limit,
  cursor: z.string().max(500).optional(),
});

export const finding = z.object({
  id: z.string(),
  tenant_id: z.string().nullable(),
  rule_id: z.string(),
  rule_version: z.number().int(),
  title: z.string(),
  severity,
  subject: z.string(),
  state: z.enum(['open', 'acknowledged', 'resolved']),
  evidence: z.array(z.string()),
  first_evidence_at: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  acknowledged_at: z.string().nullable(),
  resolved_at: z.string().nullable(),
  resolved_by: z.string().nullable(),
});

export const actionsQuery = z.object({
  tenant_id: z.string().min(1).max(64).optional(),
  action: z.string().max(64).optional(),
  finding_id: z.string().max(64).optional(),
  limit,
  cursor: z.string().max(500).optional(),
});

export const securityAction = z.object({
  id: z.string(),
  tenant_id: z.string().nullable(),
  action: z.string(),
  target_type: z.string(),
  target_id: z.string(),
  trigger: z.enum(['rule', 'operator', 'connector']),
  finding_id: z.string().nullable(),
  actor: z.string(),
  result: z.enum(['succeeded', 'failed', 'refused']),
  detail: z.record(z.string(), z.unknown()),
  undoable: z.boolean(),
  undone_at: z.string().nullable(),
  created_at: z.string(),
});

export const takeActionBody = z.discriminatedUnion('action', [
  z.object({ action: z.literal('lock_account'), user: z.string().min(1).max(320), lock_seconds: z.number().int().min(60).max(30 * 86400).default(3600), finding_id: z.string().max(64).optional(), reason: z.string().max(500).optional() }),
  z.object({ action: z.literal('revoke_sessions'), user: z.string().min(1).max(320), finding_id: z.string().max(64).optional(), reason: z.string().max(500).optional() }),
  z.object({ action: z.literal('disable_user'), user: z.string().min(1).max(320), finding_id: z.string().max(64).optional(), reason: z.string().max(500).optional() }),
  z.object({ action: z.literal('isolate_node'), node_id: z.string().min(1).max(64), finding_id: z.string().max(64).optional(), reason: z.string().max(500).optional() }),
]);

export const predictiveBody = z.object({
  window_hours: z.number().int().min(1).max(24 * 90).default(24 * 7),
  bucket_minutes: z.number().int().min(5).max(1440).default(60),
  horizon_buckets: z.number().int().min(1).max(168).default(24),
  sigma: z.number().min(0.5).max(10).default(3),
  threshold: z.number().positive().optional(),
  categories: z.array(z.string().min(1).max(64)).max(50).optional(),
});

export const predictiveRun = z.object({
  id: z.string(),
  tenant_id: z.string(),
  state: z.enum(['queued', 'running', 'succeeded', 'failed']),
  params: z.record(z.string(), z.unknown()),
  result: z.record(z.string(), z.unknown()).nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const predictiveAlert = z.object({
  id: z.string(),
  tenant_id: z.string(),
  run_id: z.string(),
  category: z.string(),
  severity,
  threshold: z.number(),
  predicted_peak: z.number(),
  crosses_at: z.string(),
  model: z.record(z.string(), z.unknown()),
  created_at: z.string(),
});

export const windowQuery = z.object({
  tenant_id: z.string().min(1).max(64).optional(),
  since: iso.optional(),
  until: iso.optional(),
});

const stat = z.object({ count: z.number().int(), mean: z.number().nullable(), median: z.number().nullable(), max: z.number().nullable(), method: z.string() });
export const metricsResponse = z.object({
  window: z.object({ from: z.string(), to: z.string() }),
  events: z.object({ total: z.number().int(), by_severity: z.record(z.string(), z.number().int()), by_category: z.array(z.object({ category: z.string(), count: z.number().int() })) }),
  findings: z.object({
    total: z.number().int(),
    by_state: z.object({ open: z.number().int(), acknowledged: z.number().int(), resolved: z.number().int() }),
    rules_firing: z.array(z.object({ rule_id: z.string(), count: z.number().int() })),
  }),
  actions: z.array(z.object({ action: z.string(), result: z.string(), count: z.number().int() })),
  mttd_seconds: stat,
  mttr_seconds: stat,
});

export const tenantReport = z.object({
  tenant_id: z.string(),
  generated_at: z.string(),
  findings: z.object({ by_state: z.record(z.string(), z.number().int()), active: z.array(finding) }),
  actions: z.array(securityAction),
  exposed_keys: z.array(z.object({ source: z.string(), id: z.string(), name: z.string(), created_at: z.string(), last_used_at: z.string().nullable(), reasons: z.array(z.string()) })),
  users_without_recent_login: z.array(z.object({ id: z.string(), email: z.string(), role: z.string(), last_login_at: z.string().nullable() })),
  method: z.string(),
});

export const idParams = z.object({ id: z.string().min(1).max(64) });
export const tenantParams = z.object({ tenant_id: z.string().min(1).max(64) });
export const noteBody = z.object({ note: z.string().max(2000).optional() });
