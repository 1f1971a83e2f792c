// Shapes of chaos scenarios and experiments (spec §2 "Chaos scenario", DESIGN §5-6), shared by
// the service and the plugin that serves them.
import { z } from 'zod';

export const INJECTION_TYPES = ['latency', 'error', 'worker_crash', 'cpu_stress', 'node_pause'] as const;
export type InjectionType = (typeof INJECTION_TYPES)[number];

/** Share of each target domain's nodes that get the fault (at least one node). */
const nodeShare = z.number().gt(0).max(1);
/** At most this many nodes per domain (the blast radius), whatever the share. */
const maxNodes = z.number().int().min(1).max(64).optional();

/** Parameters of each injection type; unknown keys are refused so that a typo is not ignored. */
export const PARAMETER_SCHEMAS = {
  latency: z.strictObject({
    latency_ms: z.number().int().min(1).max(60_000),
    jitter_ms: z.number().int().min(0).max(60_000).default(0),
    task_share: z.number().gt(0).max(1).default(1),
    node_share: nodeShare.default(1),
    max_nodes: maxNodes,
  }),
  error: z.strictObject({
    error_rate: z.number().gt(0).max(1),
    node_share: nodeShare.default(1),
    max_nodes: maxNodes,
  }),
  worker_crash: z.strictObject({
    interval_ms: z.number().int().min(50).max(600_000).default(1000),
    threads_per_crash: z.number().int().min(1).max(64).default(1),
    node_share: nodeShare.default(1),
    max_nodes: maxNodes,
  }),
  cpu_stress: z.strictObject({
    cpu_share: z.number().gt(0).max(0.95),
    period_ms: z.number().int().min(10).max(10_000).default(100),
    node_share: nodeShare.default(1),
    max_nodes: maxNodes,
  }),
  node_pause: z.strictObject({
    node_share: nodeShare.default(0.5),
    max_nodes: maxNodes,
  }),
} satisfies Record<InjectionType, z.ZodType>;

export type Parameters = Record<string, number>;

export const hypothesis = z.strictObject({
  description: z.string().max(500).default('Probe tasks on the target kernels keep succeeding, fast enough'),
  /** Least share of probe tasks that must succeed in each target domain. */
  min_success_ratio: z.number().min(0).max(1).default(0.95),
  /** Highest p99 probe latency tolerated in each target domain. */
  max_latency_p99_ms: z.number().positive().max(600_000).default(500),
});
export type Hypothesis = z.output<typeof hypothesis>;

export const domainName = z.string().regex(/^[a-z][a-z0-9-]{0,63}$/, 'a domain name (lowercase letters, digits, dashes)');

export const scenarioBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  injection_type: z.string().min(1).max(32),
  target_domains: z.array(domainName).min(1).max(64),
  parameters: z.record(z.string(), z.unknown()).default({}),
  duration_seconds: z.number().int().min(1).max(3600),
  hypothesis: hypothesis.prefault({}),
});
export type ScenarioInput = z.output<typeof scenarioBody>;

export const scenario = z.object({
  scenario_id: z.string(),
  name: z.string(),
  injection_type: z.enum(INJECTION_TYPES),
  target_domains: z.array(z.string()),
  parameters: z.record(z.string(), z.number()),
  duration_seconds: z.number().int(),
  hypothesis,
  builtin: z.boolean(),
  tenant_id: z.string().nullable(),
  created_by: z.string(),
  created_at: z.string(),
});
export type Scenario = z.output<typeof scenario>;

/** Probe figures of one domain in one phase. */
export const domainMeasurement = z.object({
  probes: z.number().int(),
  succeeded: z.number().int(),
  failed: z.number().int(),
  success_ratio: z.number().nullable(),
  latency_p50_ms: z.number().nullable(),
  latency_p99_ms: z.number().nullable(),
  held: z.boolean(),
  failures: z.array(z.string()),
});
export type DomainMeasurement = z.output<typeof domainMeasurement>;

export const measurement = z.object({
  started_at: z.string(),
  ended_at: z.string(),
  held: z.boolean(),
  domains: z.record(z.string(), domainMeasurement),
});
export type Measurement = z.output<typeof measurement>;

export const injection = z.object({
  id: z.string(),
  node_id: z.string(),
  domain: z.string(),
  kind: z.enum(INJECTION_TYPES),
  detail: z.record(z.string(), z.unknown()),
  applied_at: z.string().nullable(),
  rolled_back_at: z.string().nullable(),
  rollback_note: z.string().nullable(),
});
export type Injection = z.output<typeof injection>;

export const EXPERIMENT_STATUSES = ['running', 'completed', 'failed', 'aborted'] as const;
export type ExperimentStatus = (typeof EXPERIMENT_STATUSES)[number];

export const experiment = z.object({
  experiment_id: z.string(),
  scenario_id: z.string().nullable(),
  scenario_name: z.string(),
  kind: z.enum(['scenario', 'validation']),
  injection_type: z.enum(INJECTION_TYPES),
  target_domains: z.array(z.string()),
  parameters: z.record(z.string(), z.number()),
  duration_seconds: z.number().int(),
  hypothesis,
  status: z.enum(EXPERIMENT_STATUSES),
  /** The phase a running experiment is in; the last one it reached otherwise. */
  phase: z.string(),
  deviated: z.boolean().nullable(),
  reason: z.string().nullable(),
  steady_state: z.object({ before: measurement.nullable(), during: measurement.nullable(), after: measurement.nullable() }),
  injections: z.array(injection),
  effects: z.record(z.string(), z.unknown()),
  time_to_recover_ms: z.number().nullable(),
  started_at: z.string(),
  injected_at: z.string().nullable(),
  rolled_back_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  started_by: z.string(),
  aborted_by: z.string().nullable(),
  tenant_id: z.string(),
});
export type Experiment = z.output<typeof experiment>;

const counts = {
  experiments_run: z.number().int(),
  completed: z.number().int(),
  passed: z.number().int(),
  deviated: z.number().int(),
  recovered: z.number().int(),
  aborted: z.number().int(),
  failed: z.number().int(),
  mean_time_to_recover_ms: z.number().nullable(),
  resilience_score: z.number().nullable(),
};
export const report = z.object({
  generated_at: z.string(),
  since: z.string().nullable(),
  overall: z.object(counts),
  domains: z.array(z.object({ domain: z.string(), ...counts })),
  formula: z.string(),
});
export type Report = z.output<typeof report>;
