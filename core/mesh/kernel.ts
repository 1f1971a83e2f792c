import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import CircuitBreaker from 'opossum';
import type { Config } from '../config';
import type { KernelManifest } from '../../kernels/sdk';
import type { CancelSignal } from './cancel';
import type { MeshNode } from './node';
import type { BreakerState, Health, KernelState, NodeState } from './types';

/** A task failure that does not count against the breaker (bad input, cancelled, missing config). */
export class NotCounted extends Error {
  constructor(override readonly cause: unknown) {
    super('not counted');
  }
}

/** One domain: its nodes, its circuit breaker (opossum) and routing to the least busy node. */
export class Kernel {
  readonly nodes: MeshNode[] = [];
  readonly breaker: CircuitBreaker<[() => Promise<unknown>], unknown>;
  /** Opened by hand (isolateKernel); stays open until restored. */
  isolated = false;
  health: Health = 'unknown';
  reason = 'starting';
  nextNodeNumber = 1;
  /** Settings a new node's workers get: config `mesh.settings.<id>` until a deployment changes them. */
  settings: Record<string, unknown> = {};
  /** Run and wait times of every task, in microseconds. */
  readonly runTime: RecordableHistogram = createHistogram();
  readonly waitTime: RecordableHistogram = createHistogram();
  private waiters = new Set<() => void>();
  private turn = 0;

  constructor(
    readonly manifest: KernelManifest,
    readonly workerFile: string,
    cfg: Config['mesh']['breaker'],
  ) {
    this.breaker = new CircuitBreaker((job: () => Promise<unknown>) => job(), {
      name: manifest.domain,
      timeout: false,
      errorThresholdPercentage: cfg.errorThresholdPercentage,
      resetTimeout: cfg.resetTimeoutMs,
      volumeThreshold: cfg.volumeThreshold,
      rollingCountTimeout: cfg.rollingWindowMs,
      enableSnapshots: false,
      errorFilter: (err: unknown) => err instanceof NotCounted,
    });
  }

  get id(): string {
    return this.manifest.domain;
  }

  breakerState(): BreakerState {
    if (this.isolated || this.breaker.opened) return 'open';
    return this.breaker.halfOpen ? 'half_open' : 'closed';
  }

  /** Open breakers (automatic or by hand) isolate the kernel: no task is dispatched. */
  get isOpen(): boolean {
    return this.isolated || this.breaker.opened;
  }

  /** The least busy eligible node (fewest tasks per thread); ties go round-robin. */
  pick(): MeshNode | null {
    let best: MeshNode[] = [];
    let bestLoad = Infinity;
    for (const n of this.nodes) {
      if (!n.eligible) continue;
      if (n.load < bestLoad) {
        best = [n];
        bestLoad = n.load;
      } else if (n.load === bestLoad) best.push(n);
    }
    if (best.length === 0) return null;
    return best[this.turn++ % best.length];
  }

  /** Waits up to `ms` for an eligible node (a node resumed, capacity freed). */
  async waitForNode(ms: number, signal?: CancelSignal): Promise<MeshNode | null> {
    const deadline = Date.now() + ms;
    for (;;) {
      const node = this.pick();
      if (node) return node;
      const left = deadline - Date.now();
      if (left <= 0 || signal?.aborted) return null;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.waiters.add(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** Wakes tasks waiting for a node. */
  notify(): void {
    if (this.waiters.size === 0) return;
    for (const w of [...this.waiters]) w();
  }

  state(): KernelState {
    const s = this.nodes.map((n) => n.state);
    if (s.length === 0) return 'drained';
    if (s.every((x) => x === s[0])) return s[0];
    if (s.includes('active')) return 'active';
    if (s.includes('draining')) return 'draining';
    if (s.includes('paused')) return 'paused';
    return 'drained';
  }

  nodesByState(): Record<NodeState, number> {
    const out: Record<NodeState, number> = { active: 0, paused: 0, draining: 0, drained: 0 };
    for (const n of this.nodes) out[n.state]++;
    return out;
  }

  shutdown(): void {
    this.breaker.shutdown();
    this.notify();
  }
}
