import type { Attributes, ObservableResult } from '@opentelemetry/api';
import { seriesOf, type KeyedHistogram } from './histograms';
import { DURATION_BUCKETS_S, type Telemetry } from './service';

/** What the mesh reports when the metrics are read: one entry per node or kernel. */
export interface KernelSnapshot {
  nodes: Array<{ kernel: string; node: string; state: string; queueDepth: number; inFlight: number; threads?: ThreadFigures[] }>;
  breakers: Array<{ kernel: string; state: 'closed' | 'open' | 'half_open' }>;
}

/** One worker thread as its last heartbeat measured it (null: no heartbeat yet). */
export interface ThreadFigures {
  thread: string;
  loopDelayP99Ms: number | null;
  heapUsedBytes: number | null;
  heapLimitBytes: number | null;
}

/** The label set of one (kernel, node, task, outcome) and its count so far. */
interface TaskTally {
  attributes: Attributes;
  count: number;
}

/**
 * The host's own kernel telemetry: the mesh calls `taskFinished` for every task and adds a
 * snapshot source for the gauges (queue depth, node states, breaker states), which are read
 * only when metrics are collected.
 *
 * Task counts and durations are kept per label set under a string key: the SDK's synchronous
 * instruments hash their attributes object on every call, which cost more than the rest of
 * the bookkeeping of a small task. Counts are reported through an observable counter (a
 * monotonic sum, as before), durations through the keyed histograms the readers collect.
 */
export class KernelMetrics {
  private readonly sources: Array<() => KernelSnapshot> = [];
  private readonly tallies = new Map<string, TaskTally>();
  private readonly duration: KeyedHistogram;

  constructor(telemetry: Telemetry) {
    const m = telemetry.meter;
    const tasks = m.createObservableCounter('kernel.tasks', { description: 'Kernel tasks finished, by kernel, node, task and outcome' });
    tasks.addCallback((r) => {
      for (const t of this.tallies.values()) r.observe(t.count, t.attributes);
    });
    this.duration = telemetry.keyedHistograms.create('kernel.task.duration', { description: 'Kernel task duration', unit: 's', boundaries: DURATION_BUCKETS_S });
    const queue = m.createObservableGauge('kernel.queue.depth', { description: 'Tasks waiting in a node queue' });
    const inFlight = m.createObservableGauge('kernel.tasks.in_flight', { description: 'Tasks running on a node' });
    const nodeState = m.createObservableGauge('kernel.node.state', { description: '1 for the state a node is in' });
    const breaker = m.createObservableGauge('kernel.breaker.state', { description: '1 for the state a kernel circuit breaker is in' });
    const each = (fn: (s: KernelSnapshot) => void) => {
      for (const source of this.sources) {
        try {
          fn(source());
        } catch {
          /* a failing source only loses its own figures */
        }
      }
    };
    queue.addCallback((r: ObservableResult<Attributes>) => each((s) => s.nodes.forEach((n) => r.observe(n.queueDepth, { kernel: n.kernel, node: n.node }))));
    inFlight.addCallback((r) => each((s) => s.nodes.forEach((n) => r.observe(n.inFlight, { kernel: n.kernel, node: n.node }))));
    nodeState.addCallback((r) => each((s) => s.nodes.forEach((n) => r.observe(1, { kernel: n.kernel, node: n.node, state: n.state }))));
    breaker.addCallback((r) => each((s) => s.breakers.forEach((b) => r.observe(1, { kernel: b.kernel, state: b.state }))));
    // Per node: its live worker threads, and each thread's heap and event-loop delay as the
    // mesh's heartbeat task measured them inside the worker.
    const threads = m.createObservableGauge('kernel.node.threads', { description: 'Live worker threads of a node' });
    const heap = m.createObservableGauge('kernel.thread.heap.used', { description: 'V8 heap used by a worker thread, from its last heartbeat', unit: 'By' });
    const heapLimit = m.createObservableGauge('kernel.thread.heap.limit', { description: 'V8 heap limit of a worker thread, from its last heartbeat', unit: 'By' });
    const delay = m.createObservableGauge('kernel.thread.event_loop.delay.p99', { description: 'Event-loop delay p99 of a worker thread, from its last heartbeat', unit: 's' });
    threads.addCallback((r) => each((s) => s.nodes.forEach((n) => n.threads && r.observe(n.threads.length, { kernel: n.kernel, node: n.node }))));
    const perThread = (pick: (t: ThreadFigures) => number | null, scale = 1) => (r: ObservableResult<Attributes>) =>
      each((s) =>
        s.nodes.forEach((n) =>
          n.threads?.forEach((t) => {
            const v = pick(t);
            if (v !== null) r.observe(v * scale, { kernel: n.kernel, node: n.node, thread: t.thread });
          }),
        ),
      );
    heap.addCallback(perThread((t) => t.heapUsedBytes));
    heapLimit.addCallback(perThread((t) => t.heapLimitBytes));
    delay.addCallback(perThread((t) => t.loopDelayP99Ms, 1 / 1000));
  }

  taskFinished(t: { kernel: string; node: string; task: string; outcome: 'ok' | 'error' | 'aborted' }, durationMs: number): void {
    const key = `${t.kernel}\u0000${t.node}\u0000${t.task}\u0000${t.outcome}`;
    const tally = seriesOf(this.tallies, key, () => ({ kernel: t.kernel, node: t.node, task: t.task, outcome: t.outcome }), (attributes) => ({ attributes, count: 0 }));
    tally.count++;
    const attributes = tally.attributes;
    this.duration.record(key, () => attributes, durationMs / 1000);
  }

  addSource(source: () => KernelSnapshot): void {
    this.sources.push(source);
  }

  /** The current snapshot of every source (for the operations console). */
  snapshot(): KernelSnapshot {
    const out: KernelSnapshot = { nodes: [], breakers: [] };
    for (const source of this.sources) {
      try {
        const s = source();
        out.nodes.push(...s.nodes);
        out.breakers.push(...s.breakers);
      } catch {
        /* skipped, as in collection */
      }
    }
    return out;
  }
}
