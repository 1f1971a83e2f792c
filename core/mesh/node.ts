import type { RecordableHistogram } from 'node:perf_hooks';
import Piscina from 'piscina';
import { STRESS_CELLS, type Heartbeat, type NodeControl, type TaskEnvelope, type TaskResult, type WorkerConfig } from '../../kernels/sdk';
import { Cancel, type CancelSignal } from './cancel';
import type { DrainStatus, Health, NodeState, NodeView, ThreadView, Timing } from './types';

export interface NodeOptions {
  id: string;
  domain: string;
  /** The cluster host that runs the node; absent on a single host. */
  host?: string | null;
  workerFile: string;
  threads: number;
  heartbeatMs: number;
  maxQueue: number;
  settings: Record<string, unknown>;
  onError(err: Error): void;
}

/** Piscina's view of one worker; `id` is its thread id, -1 once the thread has exited. */
interface WorkerHandle {
  readonly id: number;
}

interface ThreadRecord {
  worker: WorkerHandle;
  startedAt: number;
  beat: Heartbeat | null;
}

export interface DrainRecord {
  startedAt: number;
  deadline: number;
  force: boolean;
  /** tasks_run + tasks_failed when the drain began. */
  doneAtStart: number;
  overdue: boolean;
  timer: NodeJS.Timeout | null;
  completedAt: number | null;
}

/** One outcome kept for the health window. */
export interface Sample {
  at: number;
  ok: boolean;
  ms: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function timing(h: RecordableHistogram | { count: number; mean: number; p50: number; p90: number; p99: number; max: number } | null): Timing {
  if (!h || h.count === 0) return { count: 0, mean: 0, p50: 0, p90: 0, p99: 0, max: 0 };
  if ('percentile' in h) {
    // perf_hooks histograms hold microseconds here.
    const ms = (v: number) => Math.round(v) / 1000;
    return { count: h.count, mean: ms(h.mean), p50: ms(h.percentile(50)), p90: ms(h.percentile(90)), p99: ms(h.percentile(99)), max: ms(h.max) };
  }
  return h;
}

/**
 * A node: its own Piscina pool, so that it can be paused, drained and terminated on its own.
 * Threads are fixed (min = max) so that thread ids are stable until the pool is destroyed.
 */
export class MeshNode {
  state: NodeState = 'active';
  stateSince = Date.now();
  readonly createdAt = Date.now();
  health: Health = 'unknown';
  reason = 'starting: no heartbeat yet';
  pool: Piscina | null = null;
  threads: number;
  control: NodeControl | null = null;
  drain: DrainRecord | null = null;
  /** Set while the pool is being destroyed; other actions wait their turn (409). */
  busy = false;
  inFlight = 0;
  tasksRun = 0;
  tasksFailed = 0;
  readonly liveThreads = new Map<number, ThreadRecord>();
  /** Recent outcomes (bounded by the health window) for error rate and latency. */
  samples: Sample[] = [];
  /** Shared with every worker of the node: background stress settings (STRESS_CELLS). */
  readonly controlBuffer = new SharedArrayBuffer(8);
  /** Worker threads started (the first ones and every replacement) and threads that exited while their pool lived. */
  threadStarts = 0;
  threadExits = 0;
  /** Aborts every running task when the pool is destroyed by force. */
  private readonly running = new Set<Cancel>();
  /** Run/wait times of the pools this node had before (Piscina histograms die with the pool). */
  private lastTiming: { run: Timing; wait: Timing } | null = null;

  constructor(readonly opts: NodeOptions) {
    this.threads = opts.threads;
  }

  get id(): string {
    return this.opts.id;
  }

  startPool(): void {
    const data: WorkerConfig = { node_id: this.id, domain: this.opts.domain, heartbeat_ms: this.opts.heartbeatMs, settings: this.opts.settings, control_buffer: this.controlBuffer };
    const pool = new Piscina({
      filename: this.opts.workerFile,
      name: '__ping',
      minThreads: this.threads,
      maxThreads: this.threads,
      idleTimeout: 2 ** 31 - 1,
      concurrentTasksPerWorker: 1,
      maxQueue: this.opts.maxQueue,
      // Atomics.wait would block an idle worker's event loop, and with it its heartbeats.
      atomics: 'disabled',
      recordTiming: true,
      workerData: data,
    });
    pool.on('workerCreate', (w: WorkerHandle) => {
      // A thread that ended before its ready message was handled is reported dead (-1): not live.
      if (w.id < 0) return;
      this.threadStarts++;
      this.liveThreads.set(w.id, { worker: w, startedAt: Date.now(), beat: null });
    });
    pool.on('workerDestroy', (w: WorkerHandle) => {
      if (this.pool === pool) this.threadExits++;
      this.liveThreads.delete(w.id);
      for (const [id, rec] of this.liveThreads) if (rec.worker.id === -1) this.liveThreads.delete(id);
    });
    pool.on('message', (m: Heartbeat) => {
      if (m?.kind !== 'heartbeat') return;
      const rec = this.liveThreads.get(m.thread_id);
      if (rec) rec.beat = m;
    });
    pool.on('error', (err: Error) => this.opts.onError(err));
    this.pool = pool;
  }

  /** Pools replaced by a resize that are finishing their tasks before they close. */
  private readonly retiring = new Set<Piscina>();

  /** Swaps in a new pool (new thread count); the old one finishes its tasks, then closes. */
  replacePool(): void {
    const old = this.pool;
    this.startPool();
    if (!old) return;
    this.retiring.add(old);
    void old.close().catch(() => undefined).finally(() => this.retiring.delete(old));
  }

  /** Terminates every thread; running tasks fail. Resolves when the threads have exited. */
  async destroyPool(): Promise<void> {
    await Promise.allSettled([...this.retiring].map((p) => p.destroy()));
    const pool = this.pool;
    if (!pool) return;
    this.lastTiming = { run: this.summary(pool.histogram.runTime), wait: this.summary(pool.histogram.waitTime) };
    this.pool = null;
    for (const c of this.running) c.abort(new Error('node drained by force'));
    await pool.destroy();
    this.liveThreads.clear();
  }

  private summary(s: { mean: number; p50: number; p90: number; p99: number; max: number }): Timing {
    const r = (v: number) => Math.round(v * 1000) / 1000;
    const count = this.tasksRun + this.tasksFailed;
    return { count, mean: r(s.mean), p50: r(s.p50), p90: r(s.p90), p99: r(s.p99), max: r(s.max) };
  }

  /** Run/wait times from the pool's Piscina histograms (the last pool's when drained). */
  timings(): { run: Timing; wait: Timing } {
    if (!this.pool || this.pool.completed === 0) return this.lastTiming ?? { run: timing(null), wait: timing(null) };
    return { run: this.summary(this.pool.histogram.runTime), wait: this.summary(this.pool.histogram.waitTime) };
  }

  get queued(): number {
    return this.pool?.queueSize ?? 0;
  }

  /** Can take another task now: active, with a pool that is not full. */
  get eligible(): boolean {
    return this.state === 'active' && this.pool !== null && this.inFlight < this.threads + this.opts.maxQueue;
  }

  /** Tasks per thread; routing picks the lowest. */
  get load(): number {
    return this.inFlight / this.threads;
  }

  /**
   * Runs a task on the pool; the result carries the thread id and run time. It is aborted
   * when `signal` aborts, when `timeoutMs` passes (then `timedOut()` is true), or when the
   * node is drained by force. One cancel switch (see cancel.ts) and one timer per task:
   * AbortSignal.any and AbortSignal.timeout cost several times the whole dispatch of a
   * small task (weak references and finalizers on every call).
   */
  async run(task: string, input: unknown, signal?: CancelSignal, timeoutMs?: number, timedOut?: () => void): Promise<TaskResult> {
    const pool = this.pool;
    if (!pool) throw new Error('node has no threads');
    const own = new Cancel();
    if (signal?.aborted) own.abort(signal.reason);
    const follow = () => own.abort(signal!.reason);
    signal?.addEventListener('abort', follow, { once: true });
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => {
      timedOut?.();
      own.abort(new Error(`task did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    this.running.add(own);
    const env: TaskEnvelope = { input, control: this.control };
    this.inFlight++;
    try {
      return (await pool.run(env, { name: task, signal: own })) as TaskResult;
    } finally {
      this.inFlight--;
      this.running.delete(own);
      clearTimeout(timer);
      signal?.removeEventListener('abort', follow);
    }
  }

  /** The kernel's self-test (`__self_test`) on one of the node's threads: whether it works with its settings. */
  async selfTest(timeoutMs: number): Promise<{ ok: boolean; detail: string }> {
    try {
      const r = await this.run('__self_test', null, undefined, timeoutMs);
      return r.ok ? { ok: true, detail: String((r.output as { detail: unknown }).detail) } : { ok: false, detail: r.error.message };
    } catch (err) {
      return { ok: false, detail: `no answer: ${(err as Error).message}` };
    }
  }

  /** Writes the background stress share (0 clears it) into the buffer every worker reads. */
  setStress(share: number, periodMs: number): void {
    const cells = new Int32Array(this.controlBuffer);
    Atomics.store(cells, STRESS_CELLS.period_ms, Math.round(periodMs));
    Atomics.store(cells, STRESS_CELLS.share_per_mille, Math.round(Math.min(0.95, Math.max(0, share)) * 1000));
  }

  /**
   * Ends one worker thread of the node (it runs `__crash`, which exits the thread); Piscina
   * starts a replacement. Resolves once the thread is gone; false when the node has no pool.
   */
  async crashThread(signal?: AbortSignal): Promise<boolean> {
    const pool = this.pool;
    if (!pool || signal?.aborted) return false;
    try {
      // The signal takes back a crash still queued behind running tasks (e.g. at rollback).
      await pool.run({ input: null, control: null } satisfies TaskEnvelope, { name: '__crash', signal });
      return false;
    } catch {
      return !signal?.aborted;
    }
  }

  /** Records a finished task for counters and the health window. */
  record(ok: boolean, ms: number, windowMs: number): void {
    if (ok) this.tasksRun++;
    else this.tasksFailed++;
    const now = Date.now();
    this.samples.push({ at: now, ok, ms });
    if (this.samples.length > 2000 || (this.samples[0] && this.samples[0].at < now - windowMs)) {
      this.samples = this.samples.filter((s) => s.at >= now - windowMs).slice(-1000);
    }
  }

  setState(state: NodeState): NodeState {
    const previous = this.state;
    this.state = state;
    this.stateSince = Date.now();
    return previous;
  }

  drainStatus(): DrainStatus {
    const d = this.drain;
    const completed = d ? this.tasksRun + this.tasksFailed - d.doneAtStart : 0;
    const total = completed + this.inFlight;
    return {
      node_id: this.id,
      state: this.state,
      started_at: d ? iso(d.startedAt) : null,
      deadline: d ? iso(d.deadline) : null,
      force: d?.force ?? false,
      in_flight: this.inFlight,
      completed,
      progress: d ? (total === 0 ? 1 : Math.round((completed / total) * 1000) / 1000) : 0,
      overdue: d?.overdue ?? false,
      completed_at: d?.completedAt ? iso(d.completedAt) : null,
    };
  }

  threadViews(): ThreadView[] {
    return [...this.liveThreads.entries()].map(([id, r]) => ({
      thread_id: id,
      started_at: iso(r.startedAt),
      last_heartbeat_at: r.beat ? iso(r.beat.at) : null,
      loop_delay_p99_ms: r.beat?.loop_delay_p99_ms ?? null,
      heap_used_bytes: r.beat?.heap_used_bytes ?? null,
      heap_limit_bytes: r.beat?.heap_limit_bytes ?? null,
    }));
  }

  view(kernelId: string): NodeView {
    return {
      id: this.id,
      kernel_id: kernelId,
      domain: this.opts.domain,
      host: this.opts.host ?? null,
      state: this.state,
      state_since: iso(this.stateSince),
      health: this.health,
      reason: this.reason,
      threads: this.threads,
      live_threads: this.threadViews(),
      in_flight: this.inFlight,
      queued: this.queued,
      tasks_run: this.tasksRun,
      tasks_failed: this.tasksFailed,
      created_at: iso(this.createdAt),
      control: this.control,
      drain: this.drain ? this.drainStatus() : null,
    };
  }
}
