import type { Config } from '../../../core/config';
import type { Mesh } from '../../../core/mesh/mesh';
import type { ActionActor } from '../../../core/mesh/types';

// Rolling changes of a kernel's nodes (Argo Rollouts' canary steps, one node at a time): a
// new node is added first (surge), must pass the health gate, and only then is an old one
// drained and removed. Used by deployments (and their rollback) and by upgrades (restart).

export interface Step {
  n: number;
  action: 'add_node' | 'remove_node';
  node_id: string;
  threads: number;
  gate: Gate | null;
  at: string;
  /** Set by the deployment: the rollout's steps, then the rollback's. */
  phase?: 'rollout' | 'rollback';
}

export interface Gate {
  ok: boolean;
  probes: number;
  failures: number;
  health: string;
  reason: string;
}

export class GateFailed extends Error {
  constructor(readonly gate: Gate) {
    super(`health gate failed: ${gate.reason}`);
  }
}

/** What a node is made with. */
export interface NodeSpec {
  threads: number;
  settings: Record<string, unknown>;
}

/** Same threads and the same settings (compared as canonical JSON: key order does not count). */
export function sameSpec(a: NodeSpec, b: NodeSpec): boolean {
  return a.threads === b.threads && canonical(a.settings) === canonical(b.settings);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Rolling {
  constructor(
    private readonly mesh: Mesh,
    private readonly cfg: Config['automation']['deployments'],
  ) {}

  /** The kernel's nodes that are not drained, oldest first: thread count and settings. */
  shape(kernelId: string): Array<NodeSpec & { id: string }> {
    return this.mesh.kernelOf(kernelId).nodes.filter((n) => n.state !== 'drained').map((n) => ({ id: n.id, threads: n.threads, settings: n.opts.settings }));
  }

  /**
   * Moves the kernel to `desired` (one spec per node: threads and settings), one node per step.
   * `onStep` sees every step (the caller persists it). A failed gate throws GateFailed after
   * the step is reported.
   */
  async converge(kernelId: string, desired: NodeSpec[], actor: ActionActor, onStep: (s: Step) => Promise<void>, replaceAll = false): Promise<void> {
    let n = 0;
    const replaced = new Set<string>();
    for (;;) {
      const current = this.shape(kernelId);
      const missing = [...desired];
      const extra: Array<{ id: string; threads: number }> = [];
      for (const node of current) {
        const i = missing.findIndex((m) => sameSpec(m, node));
        // A full restart (upgrade) replaces every node that was there at the start once.
        if (i >= 0 && !(replaceAll && !replaced.has(node.id) && !this.added.has(node.id))) missing.splice(i, 1);
        else extra.push(node);
      }
      if (missing.length) {
        const want = missing[0]!;
        const view = await this.mesh.addNode(kernelId, actor, want.threads, want.settings);
        this.added.add(view.id);
        const gate = await this.gateNode(view.id);
        await onStep({ n: ++n, action: 'add_node', node_id: view.id, threads: view.threads, gate, at: new Date().toISOString() });
        if (!gate.ok) throw new GateFailed(gate);
        continue;
      }
      if (extra.length) {
        // The newest extra node goes first: a rollback takes back what was added last.
        const victim = extra[extra.length - 1]!;
        replaced.add(victim.id);
        await this.drainAndRemove(victim.id, actor);
        const gate = this.shape(kernelId).length ? await this.gateKernel(kernelId) : null;
        await onStep({ n: ++n, action: 'remove_node', node_id: victim.id, threads: victim.threads, gate, at: new Date().toISOString() });
        if (gate && !gate.ok) throw new GateFailed(gate);
        continue;
      }
      return;
    }
  }

  /** Nodes this engine added (a restart does not replace them again). */
  private readonly added = new Set<string>();

  /**
   * Drain before replace: the node takes no new tasks, its in-flight tasks finish (until the
   * drain deadline, after which they are aborted), then its threads end and it is removed.
   */
  async drainAndRemove(nodeId: string, actor: ActionActor): Promise<void> {
    const { node } = this.mesh.nodeOf(nodeId);
    if (node.state !== 'drained' && node.state !== 'draining') await this.mesh.drainNode(nodeId, { deadline_seconds: this.cfg.drainDeadlineSeconds }, actor);
    const deadline = Date.now() + this.cfg.drainDeadlineSeconds * 1000;
    while (node.state === 'draining' && node.inFlight > 0 && Date.now() < deadline) await sleep(25);
    if (node.state === 'draining') await this.mesh.completeDrain(nodeId, { force: node.inFlight > 0 }, actor);
    while (node.busy) await sleep(25);
    await this.mesh.removeNode(nodeId, actor);
  }

  /**
   * The gate of a new node: its threads have started and sent a heartbeat, every one of
   * gateProbes pings to that node answers, and its measured health is not unhealthy.
   */
  async gateNode(nodeId: string): Promise<Gate> {
    const { node } = this.mesh.nodeOf(nodeId);
    const until = Date.now() + this.cfg.gateTimeoutMs;
    while (![...node.liveThreads.values()].some((t) => t.beat !== null) && Date.now() < until) await sleep(25);
    let failures = 0;
    let reason = '';
    for (let i = 0; i < this.cfg.gateProbes; i++) {
      try {
        const r = await node.run('__ping', null, undefined, Math.max(100, until - Date.now()));
        if (!r.ok) {
          failures++;
          reason = r.error.message;
        }
      } catch (err) {
        failures++;
        reason = (err as Error).message;
      }
    }
    // The kernel's own self-test with the node's settings (e.g. the LLM endpoint answers).
    const test = failures === 0 ? await node.selfTest(Math.max(1000, until - Date.now())) : null;
    const selfTest = test ? test.detail : 'not run: the probes failed';
    const selfTestFailed = test && !test.ok ? test.detail : null;
    const health = this.mesh.node(nodeId).health;
    const ok = failures === 0 && selfTestFailed === null && health !== 'unhealthy';
    const why = failures ? `${failures} of ${this.cfg.gateProbes} probes failed (${reason})` : selfTestFailed !== null ? `the kernel's self-test failed: ${selfTestFailed}` : `node health is ${health}`;
    return { ok, probes: this.cfg.gateProbes, failures, health, reason: ok ? `every probe answered; self-test: ${selfTest}` : why };
  }

  /** After a removal: the kernel still answers gateProbes pings. */
  async gateKernel(kernelId: string): Promise<Gate> {
    let failures = 0;
    let reason = '';
    for (let i = 0; i < this.cfg.gateProbes; i++) {
      const r = await this.mesh.ping(kernelId, this.cfg.gateTimeoutMs);
      if (!r.ok) {
        failures++;
        reason = r.reason;
      }
    }
    const health = this.mesh.kernel(kernelId).health;
    return { ok: failures === 0, probes: this.cfg.gateProbes, failures, health, reason: failures ? `${failures} of ${this.cfg.gateProbes} probes failed (${reason})` : 'every probe answered' };
  }
}
