// Response schemas of the mesh's views, shared by the plugins that serve them.
import { z } from 'zod';

export const health = z.enum(['healthy', 'degraded', 'unhealthy', 'unknown']);
export const nodeState = z.enum(['active', 'paused', 'draining', 'drained']);
/** A node's state as views show it: `lost` is a node of a host that stopped heartbeating. */
export const nodeViewState = z.enum(['active', 'paused', 'draining', 'drained', 'lost']);
export const breakerState = z.enum(['closed', 'open', 'half_open']);

/** Kernel ids are domain names; node ids are `<domain>-<n>`. */
export const kernelId = z.string().regex(/^[a-z][a-z0-9-]*$/, 'a kernel id: lowercase letters, digits and dashes').max(64);
export const nodeId = z.string().regex(/^[a-z][a-z0-9-]*-\d+$/, 'a node id such as trading-1').max(96);

export const drainStatus = z.object({
  node_id: z.string(),
  state: nodeState,
  started_at: z.string().nullable(),
  deadline: z.string().nullable(),
  force: z.boolean(),
  in_flight: z.number().int(),
  completed: z.number().int(),
  progress: z.number(),
  overdue: z.boolean(),
  completed_at: z.string().nullable(),
});

export const nodeView = z.object({
  id: z.string(),
  kernel_id: z.string(),
  domain: z.string(),
  /** The cluster host that runs the node; null on a single host. */
  host: z.string().nullable(),
  state: nodeViewState,
  state_since: z.string(),
  health,
  reason: z.string(),
  threads: z.number().int(),
  live_threads: z.array(
    z.object({
      thread_id: z.number().int(),
      started_at: z.string(),
      last_heartbeat_at: z.string().nullable(),
      loop_delay_p99_ms: z.number().nullable(),
      heap_used_bytes: z.number().nullable(),
      heap_limit_bytes: z.number().nullable(),
    }),
  ),
  in_flight: z.number().int(),
  queued: z.number().int(),
  tasks_run: z.number().int(),
  tasks_failed: z.number().int(),
  created_at: z.string(),
  control: z.object({ latency_ms: z.number().optional(), error_rate: z.number().optional(), cpu_busy_ms: z.number().optional(), crash: z.boolean().optional() }).nullable(),
  drain: drainStatus.nullable(),
});

export const kernelView = z.object({
  id: z.string(),
  domain: z.string(),
  description: z.string(),
  state: nodeState,
  health,
  reason: z.string(),
  breaker: z.object({ state: breakerState, isolated: z.boolean() }),
  slo: z.object({ latency_p95_ms: z.number(), error_rate: z.number() }),
  tasks: z.array(z.string()),
  nodes: z.array(nodeView),
  nodes_by_state: z.record(z.string(), z.number().int()),
});

const timing = z.object({ count: z.number().int(), mean: z.number(), p50: z.number(), p90: z.number(), p99: z.number(), max: z.number() });
const counters = { tasks_run: z.number().int(), tasks_failed: z.number().int(), in_flight: z.number().int(), queued: z.number().int() };

export const meshStats = z.object({
  timestamp: z.string(),
  totals: z.object(counters),
  kernels: z.array(
    z.object({
      kernel_id: z.string(),
      ...counters,
      run_time_ms: timing,
      wait_time_ms: timing,
      nodes: z.array(z.object({ node_id: z.string(), host: z.string().nullable().describe('The cluster host that runs the node (null on a single host)'), state: nodeState, utilization: z.number(), ...counters, run_time_ms: timing, wait_time_ms: timing })),
    }),
  ),
  hosts: z.array(z.string()).describe('In a cluster, the hosts whose figures are in (every live host that answered in time); empty on a single host'),
});

export const overview = z.object({
  timestamp: z.string(),
  registry: z.object({ total_nodes: z.number().int(), by_domain: z.record(z.string(), z.number().int()), by_health: z.record(z.string(), z.number().int()), by_state: z.record(z.string(), z.number().int()) }),
  health: z.object({ global_state: health, reason: z.string(), kernel_count: z.number().int(), kernels: z.record(z.string(), health) }),
  circuit_breaker: z.object({ kernel_states: z.record(z.string(), breakerState), isolated_kernels: z.array(z.string()) }),
});

export const kernelActionResult = z.object({ kernel: kernelView, changed: z.array(z.string()), skipped: z.array(z.object({ node_id: z.string(), reason: z.string() })) });

export const drainBody = z
  .object({
    deadline_seconds: z.number().int().min(1).max(86_400).optional(),
    /** At the deadline, abort the tasks still in flight instead of waiting for them. */
    force: z.boolean().optional(),
  })
  .strict();

export const incident = z.object({ id: z.string(), kernel_id: z.string(), node_id: z.string().nullable(), health, previous: health, reason: z.string(), at: z.string() });
