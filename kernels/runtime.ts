// The worker side of every kernel: wraps the pure handlers of a kernel's worker file, checks
// input and output with the manifest's zod schemas, and sends heartbeats from each thread.
//
// Fault injection: the host keeps a small control state per node (NodeControl in sdk.ts:
// latency_ms, error_rate, cpu_busy_ms, crash) and sends it with every task envelope, so a
// node's faults follow its tasks without any change here: applyControl() below reads it
// before the handler runs. A chaos feature only sets that state on the node (Mesh.setControl).
import crypto from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import v8 from 'node:v8';
import { isMainThread, parentPort, threadId, workerData } from 'node:worker_threads';
import type { z } from 'zod';
import { STRESS_CELLS, TaskError, type Heartbeat, type KernelManifest, type NodeControl, type TaskDef, type TaskEnvelope, type TaskFault, type TaskResult, type WorkerConfig } from './sdk';

type Impl<T extends Record<string, TaskDef>> = {
  [K in keyof T]: (input: z.output<T[K]['input']>, ctx: TaskContext) => Promise<z.input<T[K]['output']>> | z.input<T[K]['output']>;
};

export interface TaskContext {
  /** The kernel's settings from config (e.g. an LLM endpoint). */
  settings: Record<string, unknown>;
  node_id: string;
}

const config: WorkerConfig | null = !isMainThread && workerData && typeof workerData === 'object' && 'node_id' in workerData ? (workerData as WorkerConfig) : null;

function startHeartbeats(cfg: WorkerConfig): void {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const beat = () => {
    const heap = v8.getHeapStatistics();
    const hb: Heartbeat = {
      kind: 'heartbeat',
      node_id: cfg.node_id,
      thread_id: threadId,
      at: Date.now(),
      loop_delay_p99_ms: Math.round(delay.percentile(99) / 1e4) / 100,
      loop_delay_max_ms: Math.round(delay.max / 1e4) / 100,
      heap_used_bytes: heap.used_heap_size,
      heap_limit_bytes: heap.heap_size_limit,
    };
    delay.reset();
    parentPort?.postMessage(hb);
  };
  beat();
  // Unref'd: heartbeats never keep a thread alive that the pool wants gone.
  setInterval(beat, cfg.heartbeat_ms).unref();
}

/**
 * Background CPU stress (chaos cpu_stress): reads the node's shared control buffer and, while
 * a share is set, keeps the thread busy for that share of each period, tasks or not.
 */
function startStress(buf: SharedArrayBuffer): void {
  const cells = new Int32Array(buf);
  const tick = () => {
    const share = Atomics.load(cells, STRESS_CELLS.share_per_mille) / 1000;
    const period = Atomics.load(cells, STRESS_CELLS.period_ms) || 100;
    if (share <= 0) return void setTimeout(tick, 50).unref();
    const end = performance.now() + share * period;
    while (performance.now() < end) {
      /* the busy loop is the fault */
    }
    setTimeout(tick, Math.max(1, Math.round((1 - share) * period))).unref();
  };
  setTimeout(tick, 50).unref();
}

let started = false;
function ensureStarted(): void {
  if (started || !config) return;
  started = true;
  startHeartbeats(config);
  if (config.control_buffer) startStress(config.control_buffer);
}

async function applyControl(c: NodeControl | null | undefined): Promise<void> {
  if (!c) return;
  if (c.crash) process.exit(1);
  if (c.latency_ms && c.latency_ms > 0 && (c.latency_share === undefined || crypto.randomInt(1_000_000) < c.latency_share * 1_000_000)) {
    const jitter = c.latency_jitter_ms && c.latency_jitter_ms > 0 ? crypto.randomInt(Math.round(c.latency_jitter_ms) + 1) : 0;
    await new Promise((r) => setTimeout(r, c.latency_ms! + jitter));
  }
  if (c.cpu_busy_ms && c.cpu_busy_ms > 0) {
    const end = performance.now() + c.cpu_busy_ms;
    while (performance.now() < end) {
      /* the busy loop is the fault */
    }
  }
  if (c.error_rate && c.error_rate > 0 && crypto.randomInt(1_000_000) < c.error_rate * 1_000_000) {
    // A fault injected on purpose is reported to the caller as such (chaos experiments read it).
    throw new TaskError('injected failure (node control error_rate)', { code: 'INJECTED_FAILURE', status: 502 });
  }
}

/** What a handler threw, as a value: a TaskError as the caller should read it; anything else is internal. */
function faultOf(err: unknown): TaskFault {
  if (err instanceof TaskError) return { kind: 'task', message: err.message, code: err.code, status: err.status, loc: err.loc };
  const e = err instanceof Error ? err : new Error(String(err));
  return { kind: 'internal', message: e.message, stack: e.stack };
}

/** Checks that the worker can do its work with its settings; throws what is wrong, returns what it checked. */
export type SelfTest = (ctx: TaskContext) => Promise<string> | string;

/**
 * Turns a kernel's handlers into the named exports Piscina calls (`name` option), plus
 * `__ping` (a round trip for availability checks). Export the result with `export =`.
 */
export function serve<T extends Record<string, TaskDef>>(manifest: KernelManifest<T>, impl: Impl<T>, opts: { selfTest?: SelfTest } = {}): Record<string, (env: TaskEnvelope) => Promise<TaskResult>> {
  ensureStarted();
  const ctx: TaskContext = { settings: config?.settings ?? {}, node_id: config?.node_id ?? 'main' };
  const out: Record<string, (env: TaskEnvelope) => Promise<TaskResult>> = {
    // The node's control applies to pings too, so that an availability check sees injected faults.
    __ping: async (env: TaskEnvelope | null) => {
      const start = performance.now();
      const run_ms = () => Math.round((performance.now() - start) * 1000) / 1000;
      try {
        await applyControl(env?.control);
      } catch (err) {
        return { ok: false, error: faultOf(err), thread_id: threadId, run_ms: run_ms() };
      }
      return { ok: true, output: { pong: true }, thread_id: threadId, run_ms: run_ms() };
    },
    // The kernel's own check of its settings (a deployment's health gate runs it on a new node).
    __self_test: async () => {
      const start = performance.now();
      const run_ms = () => Math.round((performance.now() - start) * 1000) / 1000;
      try {
        const detail = opts.selfTest ? await opts.selfTest(ctx) : 'this kernel declares no self-test';
        return { ok: true, output: { tested: Boolean(opts.selfTest), detail }, thread_id: threadId, run_ms: run_ms() };
      } catch (err) {
        return { ok: false, error: faultOf(err), thread_id: threadId, run_ms: run_ms() };
      }
    },
    // Ends this worker thread (chaos worker_crash); the pool starts a replacement.
    __crash: async () => process.exit(1),
  };
  for (const name of Object.keys(manifest.tasks)) {
    const def = manifest.tasks[name];
    const handler = impl[name as keyof T] as (input: unknown, ctx: TaskContext) => unknown;
    if (typeof handler !== 'function') throw new Error(`kernel "${manifest.domain}": no handler for task "${name}"`);
    out[name] = async (env: TaskEnvelope): Promise<TaskResult> => {
      const start = performance.now();
      const done = (r: { ok: true; output: unknown } | { ok: false; error: TaskFault }): TaskResult => ({ ...r, thread_id: threadId, run_ms: Math.round((performance.now() - start) * 1000) / 1000 });
      try {
        await applyControl(env.control);
        const input = def.input.safeParse(env.input);
        // The host checked the input already; this guards a worker called some other way.
        if (!input.success) return done({ ok: false, error: { kind: 'input', message: input.error.message, issues: input.error.issues } });
        const result = await handler(input.data, ctx);
        const output = def.output.safeParse(result);
        if (!output.success) return done({ ok: false, error: faultOf(new Error(`task "${name}" produced output that does not match its schema: ${output.error.message}`)) });
        return done({ ok: true, output: output.data });
      } catch (err) {
        return done({ ok: false, error: faultOf(err) });
      }
    };
  }
  return out;
}
