// Insight chains, agents and platform KPIs: provided by plugin `agi`, written and read by
// autonomous, copilot and enterprise. An insight chain is a recorded chain of reasoning:
// observations (measured evidence) → inferences (rules over them) → a recommendation →
// the decision and, later, the measured outcome. Observations name a metric of the KPI
// service with its parameters, so that `replay` can measure them again.
import { createServiceRef } from '../plugin';

export interface Observation {
  /** Unique within the chain (e.g. `o1`). */
  id: string;
  /** A metric of the KPI service (see METRICS), or `tool:<name>` for a copilot tool result. */
  metric: string;
  params: Record<string, unknown>;
  /** The measured value; null when nothing was measured (no data in the window). */
  value: number | null;
  detail?: unknown;
  at: string;
}

export type Op = '>' | '>=' | '<' | '<=';

export interface Inference {
  id: string;
  text: string;
  /** Observation ids the inference rests on. */
  from: string[];
  /** The test the inference makes; an inference without one is a plain statement. */
  rule?: { observation: string; op: Op; threshold: number } | null;
}

export interface Recommendation {
  action: string;
  target: string | null;
  params: Record<string, unknown>;
  text: string;
  /** What the chain expects the change to do, checked against the outcome later. */
  prediction?: { metric: string; params: Record<string, unknown>; value: number } | null;
}

export const DECISION_STATES = ['none', 'answered', 'pending_approval', 'applied', 'rejected', 'blocked', 'failed', 'expired'] as const;
export type DecisionState = (typeof DECISION_STATES)[number];

export interface Decision {
  state: DecisionState;
  by: string | null;
  at: string;
  approval_id?: string | null;
  detail?: unknown;
}

export interface Outcome {
  metric: string;
  value: number | null;
  predicted: number | null;
  /** value - predicted, when both exist. */
  error: number | null;
  measured_at: string;
}

export interface InsightChain {
  id: string;
  tenant_id: string;
  agent_id: string;
  topic: string;
  summary: string;
  observations: Observation[];
  inferences: Inference[];
  recommendation: Recommendation | null;
  decision: Decision;
  outcome: Outcome | null;
  created_at: string;
  updated_at: string;
}

export type NewChain = Pick<InsightChain, 'tenant_id' | 'agent_id' | 'topic' | 'summary' | 'observations' | 'inferences' | 'recommendation'> & { decision?: Decision };

export const AGENT_KINDS = ['cognitive_loop', 'ako', 'copilot', 'generated', 'analysis'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

export interface Agent {
  id: string;
  /** Null for the platform's own agents (visible to every tenant). */
  tenant_id: string | null;
  name: string;
  kind: AgentKind;
  description: string;
  /** The role its actions are checked against, and the action kinds it may propose. */
  role: 'viewer' | 'member' | 'operator';
  permissions: string[];
  state: 'active' | 'stopped';
  created_at: string;
  updated_at: string;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface InsightStore {
  record(chain: NewChain): Promise<InsightChain>;
  /** Sets the decision of a chain (by id, any tenant: callers hold the id they made). */
  decide(id: string, decision: Decision): Promise<void>;
  /** Measures the chain's prediction now and stores it as the outcome. */
  settle(id: string): Promise<Outcome | null>;
  list(tenantId: string, filter: { agent_id?: string; topic?: string; limit: number; cursor?: string }): Promise<Page<InsightChain>>;
  /** 404 for another tenant's chain. */
  get(tenantId: string, id: string): Promise<InsightChain>;
  /** Creates or updates an agent (platform agents have tenant_id null). */
  registerAgent(agent: Omit<Agent, 'created_at' | 'updated_at'>): Promise<Agent>;
  agents(tenantId: string): Promise<Agent[]>;
  /** 404 unless it is the tenant's or a platform agent. */
  agent(tenantId: string, id: string): Promise<Agent>;
}

export const insightsRef = createServiceRef<InsightStore>('agi.insights');

// ---- KPIs measured from the platform's state ----

export const METRICS = [
  'kernel_tasks',
  'kernel_error_rate',
  'kernel_latency_p95_ms',
  'kernel_queue_wait_p95_ms',
  'kernel_active_nodes',
  'kernel_slo_burn_rate',
  'tenant_tasks',
  'tenant_task_success_rate',
  'open_incidents',
  'workflow_runs',
  'workflow_failure_rate',
  'workflow_duration_p95_ms',
  'cost_usd',
  'manual_actions',
] as const;
export type Metric = (typeof METRICS)[number];

export interface Measurement {
  metric: Metric;
  params: Record<string, unknown>;
  value: number | null;
  /** Where it was read: a table or the live mesh. */
  source: string;
  window: { since: string; until: string } | null;
}

export interface KpiService {
  /** One metric for a tenant; kernel metrics read the shared mesh (params.kernel), the others the tenant's data. */
  measure(tenantId: string, metric: Metric, params?: Record<string, unknown>): Promise<Measurement>;
  /** The tenant-level KPI set over a window (seconds), and per kernel figures. */
  snapshot(tenantId: string, windowSeconds: number): Promise<KpiSnapshot>;
}

export interface KpiSnapshot {
  window: { since: string; until: string; seconds: number };
  tenant: Record<'tenant_tasks' | 'tenant_task_success_rate' | 'open_incidents' | 'workflow_runs' | 'workflow_failure_rate' | 'workflow_duration_p95_ms' | 'cost_usd' | 'manual_actions', number | null>;
  kernels: Array<{ kernel: string; tasks: number; error_rate: number | null; latency_p95_ms: number | null; queue_wait_p95_ms: number | null; active_nodes: number; threads: number; slo_burn_rate: number | null; slo: { availability: number; latency_p99_ms: number } }>;
}

export const kpisRef = createServiceRef<KpiService>('agi.kpis');
