// The planning (cognitive) loop: provided by plugin `agi` (/agi/cognitive_loop, /agi/cognitive/kpis)
// and driven by plugin `autonomous` (/autonomous/corporate-brain). One loop per tenant:
// observe (KPIs) → orient (objectives met or not) → decide (actions, each an insight chain) →
// act (through governance: agent actions wait for a human's approval).
import { createServiceRef } from '../plugin';
import type { Caller } from '../roles';
import type { KpiSnapshot } from './insights';

export interface Loop {
  id: string;
  tenant_id: string;
  state: 'running' | 'stopped';
  interval_seconds: number;
  window_seconds: number;
  started_by: string;
  stopped_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface Objective {
  id: string;
  kpi: string;
  scope: string;
  target: string;
  value: number | null;
  status: 'met' | 'unmet' | 'no_data';
}

export interface PlannedAction {
  objective: string;
  kind: string;
  target: string;
  params: Record<string, unknown>;
  reason: string;
  chain_id: string;
  /** What governance did: pending_approval, executed, blocked, failed; `recommended` when no action kind applies. */
  status: string;
  approval_id: string | null;
}

export interface Iteration {
  id: string;
  loop_id: string | null;
  tenant_id: string;
  trigger: 'schedule' | 'manual';
  kpis: KpiSnapshot;
  objectives: Objective[];
  decisions: PlannedAction[];
  error: string | null;
  created_at: string;
  finished_at: string | null;
}

export interface PlanningLoop {
  /** 409 when the tenant's loop already runs. */
  start(caller: Caller, opts: { interval_seconds?: number; window_seconds?: number }): Promise<Loop>;
  stop(caller: Caller): Promise<Loop>;
  /** One iteration now (recorded; part of the running loop if there is one). */
  iterate(caller: Caller): Promise<Iteration>;
  current(tenantId: string): Promise<Loop | null>;
  loops(tenantId: string, limit: number, cursor?: string): Promise<{ items: Loop[]; next_cursor: string | null }>;
  /** 404 for another tenant's loop. */
  loop(tenantId: string, id: string): Promise<Loop>;
  iterations(tenantId: string, filter: { loop_id?: string; limit: number; cursor?: string }): Promise<{ items: Iteration[]; next_cursor: string | null }>;
  /** Objectives of the latest iteration and every action planned, with its approval's state now. */
  plan(tenantId: string): Promise<Plan>;
  /** For each applied action: the KPI it targeted when decided, at the outcome, and now. */
  progress(tenantId: string): Promise<Progress>;
  /** The loop's own figures: decisions, acceptance, prediction error, value of applied changes. */
  figures(tenantId: string): Promise<LoopFigures>;
}

export interface Plan {
  iteration_id: string | null;
  generated_at: string | null;
  objectives: Objective[];
  actions: Array<PlannedAction & { iteration_id: string; decided_at: string; approval_state: string | null }>;
}

export interface Progress {
  method: string;
  items: Array<{ chain_id: string; kind: string; target: string; metric: string; params: Record<string, unknown>; before: number | null; predicted: number | null; after: number | null; now: number | null; change: number | null; applied_at: string }>;
}

export interface LoopFigures {
  method: string;
  decisions: number;
  actions_proposed: number;
  approved: number;
  rejected: number;
  expired: number;
  pending: number;
  acceptance_rate: number | null;
  predictions_settled: number;
  mean_absolute_prediction_error: number | null;
  mean_relative_prediction_error: number | null;
  applied_changes: number;
  /** Sum over applied changes of (value before - value after) of lower-is-better KPIs, per metric. */
  value_of_applied_changes: Record<string, number>;
  iterations: number;
}

export const planningRef = createServiceRef<PlanningLoop>('agi.planning');
