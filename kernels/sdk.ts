// The kernel contract (DESIGN §4), shared by the host and the worker threads. Kernels import
// this file and zod only: never core, express or knex.
import { z } from 'zod';

export interface TaskDef<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  summary: string;
  input: I;
  output: O;
}

export interface KernelManifest<T extends Record<string, TaskDef> = Record<string, TaskDef>> {
  /** The domain name; also the kernel id. Lowercase letters, digits, dashes. */
  domain: string;
  description: string;
  /** Default node count and threads per node (config can override both). */
  nodes: number;
  threadsPerNode: number;
  /** Targets the health derivation compares measured figures with. */
  slo: { latency_p95_ms: number; error_rate: number };
  tasks: T;
  /** The shape of the kernel's settings (config `mesh.settings.<domain>`, or a deployment's), when it has any. */
  settings?: z.ZodType;
}

export function task<I extends z.ZodType, O extends z.ZodType>(def: TaskDef<I, O>): TaskDef<I, O> {
  return def;
}

export function defineKernel<T extends Record<string, TaskDef>>(m: KernelManifest<T>): KernelManifest<T> {
  if (!/^[a-z][a-z0-9-]*$/.test(m.domain)) throw new Error(`kernel domain "${m.domain}" must be lowercase letters, digits and dashes`);
  for (const name of Object.keys(m.tasks)) {
    if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`kernel "${m.domain}": task name "${name}" must be lowercase letters, digits and underscores`);
  }
  return m;
}

/**
 * An answer meant for the caller. A handler throws it when the task cannot give a result for
 * this input (status 422, the default), or cannot run now (503), or for any other reason the
 * caller should read; its message, `code` and status reach the caller as they are. Anything
 * else a handler throws is an internal fault: the caller gets a generic 502 with the request
 * id, and the host logs the worker's stack under that id.
 */
export class TaskError extends Error {
  /** A stable UPPER_SNAKE code a client can branch on. */
  readonly code: string;
  /** 4xx, or 502, 503, 504. */
  readonly status: number;
  /** Where in the input the problem is (422 answers name it, FastAPI-style). */
  readonly loc: Array<string | number>;

  constructor(message: string, opts: { code: string; status?: number; loc?: Array<string | number> }) {
    super(message);
    const status = opts.status ?? 422;
    if (!((status >= 400 && status < 500) || status === 502 || status === 503 || status === 504)) throw new Error(`TaskError status ${status}: use 4xx, 502, 503 or 504`);
    if (!/^[A-Z][A-Z0-9_]*$/.test(opts.code)) throw new Error(`TaskError code "${opts.code}" must be UPPER_SNAKE`);
    this.code = opts.code;
    this.status = status;
    this.loc = opts.loc ?? [];
  }
}

/** Input that passes the schema but cannot be computed (422 INVALID_TASK_INPUT at `loc`). */
export class TaskInputError extends TaskError {
  constructor(message: string, loc: Array<string | number> = []) {
    super(message, { code: 'INVALID_TASK_INPUT', status: 422, loc });
  }
}

/** Something the task needs is missing or unreachable (503 TASK_UNAVAILABLE with the reason). */
export class TaskUnavailableError extends TaskError {
  constructor(message: string) {
    super(message, { code: 'TASK_UNAVAILABLE', status: 503 });
  }
}

/** Per-node control state the host sends with every task (see runtime.ts). */
export interface NodeControl {
  /** Added latency before the handler runs, in ms. */
  latency_ms?: number;
  /** Extra latency drawn uniformly from 0..latency_jitter_ms on top of latency_ms. */
  latency_jitter_ms?: number;
  /** Share of tasks (0..1) that get the latency; all when unset. */
  latency_share?: number;
  /** Share of tasks (0..1) that fail on purpose. */
  error_rate?: number;
  /** Busy loop on the worker's thread before the handler runs, in ms (blocks its event loop and heartbeats). */
  cpu_busy_ms?: number;
  /** The worker thread exits while running the task. */
  crash?: boolean;
  /**
   * Background CPU stress on every thread of the node, tasks or not: busy for cpu_share of
   * each cpu_period_ms (default 100). Travels through the node's shared control buffer.
   */
  cpu_share?: number;
  cpu_period_ms?: number;
}

/** Int32 cells of a node's shared control buffer (workerData.control_buffer). */
export const STRESS_CELLS = { share_per_mille: 0, period_ms: 1 } as const;

/** What the host posts to a worker: the task input and the node's control state. */
export interface TaskEnvelope {
  input: unknown;
  control?: NodeControl | null;
}

/**
 * A failed task as it crosses the thread boundary (errors are values so that their kind
 * survives it): the worker's own input check (zod issues, translated by the host like any
 * other 422), a TaskError for the caller, or an internal fault with the worker's stack.
 */
export type TaskFault =
  | { kind: 'input'; message: string; issues: unknown[] }
  | { kind: 'task'; message: string; code: string; status: number; loc: Array<string | number> }
  | { kind: 'internal'; message: string; stack?: string };

/** What a worker answers; errors are values so that their kind survives the thread boundary. */
export type TaskResult = { ok: true; output: unknown; thread_id: number; run_ms: number } | { ok: false; error: TaskFault; thread_id: number; run_ms: number };

/** A heartbeat, measured inside a worker thread and posted to its pool. */
export interface Heartbeat {
  kind: 'heartbeat';
  node_id: string;
  thread_id: number;
  at: number;
  /** Event-loop delay measured in the worker since its previous heartbeat. */
  loop_delay_p99_ms: number;
  loop_delay_max_ms: number;
  heap_used_bytes: number;
  heap_limit_bytes: number;
}

/** workerData of every pool: which node it is, heartbeat interval, the kernel's settings. */
export interface WorkerConfig {
  node_id: string;
  domain: string;
  heartbeat_ms: number;
  settings: Record<string, unknown>;
  /** Shared with the host: background stress settings (see STRESS_CELLS). */
  control_buffer?: SharedArrayBuffer;
}
