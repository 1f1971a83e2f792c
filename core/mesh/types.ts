import type { NodeControl } from '../../kernels/sdk';

export type NodeState = 'active' | 'paused' | 'draining' | 'drained';
export type KernelState = NodeState;
/** `unknown`: nothing measured yet, or a drained node with no threads. */
export type Health = 'healthy' | 'degraded' | 'unhealthy' | 'unknown';
export type BreakerState = 'closed' | 'open' | 'half_open';

/** Who did a control action: a caller (user id) or a component of the platform. */
export interface ActionActor {
  source: 'manual' | 'automated';
  actor: string;
  cause?: string | null;
}

export interface ThreadView {
  thread_id: number;
  started_at: string;
  last_heartbeat_at: string | null;
  loop_delay_p99_ms: number | null;
  heap_used_bytes: number | null;
  heap_limit_bytes: number | null;
}

export interface DrainStatus {
  node_id: string;
  state: NodeState;
  /** Null unless a drain is running or the node is drained. */
  started_at: string | null;
  deadline: string | null;
  force: boolean;
  in_flight: number;
  /** Tasks finished (either way) since the drain started. */
  completed: number;
  /** completed / (completed + in_flight); 1 when nothing is left. */
  progress: number;
  /** The deadline passed with tasks still in flight; the node completes when they finish. */
  overdue: boolean;
  completed_at: string | null;
}

export interface NodeView {
  id: string;
  kernel_id: string;
  domain: string;
  host: string | null;
  state: NodeState | 'lost';
  state_since: string;
  health: Health;
  reason: string;
  threads: number;
  live_threads: ThreadView[];
  in_flight: number;
  queued: number;
  tasks_run: number;
  tasks_failed: number;
  created_at: string;
  control: NodeControl | null;
  drain: DrainStatus | null;
}

export interface KernelView {
  id: string;
  domain: string;
  description: string;
  state: KernelState;
  health: Health;
  reason: string;
  breaker: { state: BreakerState; isolated: boolean };
  slo: { latency_p95_ms: number; error_rate: number };
  tasks: string[];
  nodes: NodeView[];
  nodes_by_state: Record<NodeState, number>;
}

export interface TaskInfo {
  name: string;
  summary: string;
  input_schema: unknown;
  output_schema: unknown;
}

export interface Timing {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface Counters {
  tasks_run: number;
  tasks_failed: number;
  in_flight: number;
  queued: number;
  run_time_ms: Timing;
  wait_time_ms: Timing;
}

export interface MeshStats {
  timestamp: string;
  totals: Omit<Counters, 'run_time_ms' | 'wait_time_ms'>;
  kernels: Array<Counters & { kernel_id: string; nodes: Array<Counters & { node_id: string; host: string | null; state: NodeState; utilization: number }> }>;
}

/** A host of the cluster, as GET /mesh/hosts lists it. */
export interface HostInfo {
  host_id: string | null;
  url: string | null;
  started_at: string;
  heartbeat_at: string;
  live: boolean;
  nodes: number;
  this_host: boolean;
  breakers: Record<string, { state: BreakerState; isolated: boolean }>;
}
