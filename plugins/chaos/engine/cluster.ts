// Chaos across the hosts of a cluster (docs/scale-out.md). An experiment runs on the host that
// got it; a fault on a node another host runs is applied, read and removed by that host over
// the control bus (the node's threads and control live there), and every host that runs a
// target kernel probes its own nodes, so the hypothesis sees the faults wherever they are.
import { answerOf as answer, bodyOrThrow, type ControlRequest } from '../../../core/cluster/bus';
import type { Mesh } from '../../../core/mesh/mesh';
import type { ActionActor } from '../../../core/mesh/types';
import { apply, localState, rollback, type FaultState, type Planned } from './injections';
import { probeRound, type ProbeConfig, type Sample } from './probes';
import type { Parameters } from './schemas';

/**
 * worker_crash, one tick on one node: ends up to `max` threads when all are up (a heartbeat
 * each) and idle enough; answers how many ended (null: skipped, the node was not ready).
 */
export async function crashTick(mesh: Mesh, nodeId: string, max: number, signal?: AbortSignal): Promise<number | null> {
  const node = mesh.faults(nodeId);
  if (!node?.hasThreads) return null;
  const up = node.liveThreadIds().length >= node.threads && node.allThreadsBeating();
  const n = up ? Math.min(max, node.threads - node.inFlight) : 0;
  if (n <= 0) return null;
  const ended = await Promise.all(Array.from({ length: n }, () => node.crashThread(signal)));
  return ended.filter(Boolean).length;
}

/** A crash waits for the thread to end (Piscina's worker exit), a few hundred ms at most here. */
const CRASH_WAIT_MS = 10_000;

type Caller = { id: string; tenantId: string };


export class ChaosCluster {
  constructor(private readonly mesh: Mesh) {}

  /**
   * Lets the other hosts' experiments act on this host's nodes, and the other hosts abort or
   * halt the experiments this host runs (`experiments`, the engine).
   */
  register(experiments: { abort(id: string, caller: Caller): Promise<unknown>; haltHere(caller: Caller): Promise<unknown> }): void {
    const bus = this.mesh.bus;
    if (!bus) return;
    const inj = (r: ControlRequest) => r.args.injection as Planned;
    const actor = (r: ControlRequest) => r.args.actor as ActionActor;
    bus.handle('chaos.apply', (r) => answer(async () => {
      const i = inj(r);
      await apply(this.mesh, i, r.args.parameters as Parameters, actor(r));
      return { detail: i.detail };
    }));
    bus.handle('chaos.rollback', (r) => answer(async () => {
      const i = inj(r);
      const note = await rollback(this.mesh, i, actor(r));
      return { note, detail: i.detail };
    }));
    bus.handle('chaos.state', (r) => answer(async () => ({ state: localState(this.mesh, r.node_id) })));
    bus.handle('chaos.crash', (r) => answer(async () => ({ ended: await crashTick(this.mesh, r.node_id, Number(r.args.max)) })));
    bus.handle('chaos.abort', (r) => answer(() => experiments.abort(r.node_id, r.args.caller as Caller)));
    bus.handle('chaos.halt', (r) => answer(() => experiments.haltHere(r.args.caller as Caller)));
    bus.handle('chaos.probe', (r) => answer(async () => ({ samples: Object.fromEntries(await probeRound(this.mesh, this.probed(r.args.domains as string[]), r.args.cfg as ProbeConfig)) })));
  }

  /** The host that runs the node, when it is not this one (409 NODE_HOST_LOST for a lost host's node). */
  owner(nodeId: string): string | null {
    return this.mesh.bus ? this.mesh.ownerOf(nodeId) : null;
  }

  private async ask<T>(owner: string, nodeId: string, action: string, args: Record<string, unknown>, opts?: { what?: string; timeoutMs?: number }): Promise<T> {
    return bodyOrThrow<T>(await this.mesh.bus!.request(owner, nodeId, action, args, opts), owner);
  }

  async apply(inj: Planned, p: Parameters, actor: ActionActor): Promise<void> {
    const owner = this.owner(inj.node_id);
    if (!owner) return apply(this.mesh, inj, p, actor);
    const r = await this.ask<{ detail: Record<string, unknown> }>(owner, inj.node_id, 'chaos.apply', { injection: inj, parameters: p, actor });
    inj.detail = r.detail;
    inj.applied = true;
  }

  /** Removes one fault where its node runs (idempotent); a note when it could not be removed as applied. */
  async rollback(inj: Planned, actor: ActionActor): Promise<string | null> {
    let owner: string | null;
    try {
      owner = this.owner(inj.node_id);
    } catch (err) {
      inj.rolledBack = true;
      return (err as Error).message;
    }
    if (!owner) return rollback(this.mesh, inj, actor);
    if (inj.rolledBack) return null;
    // Marked first, as the local rollback does, so that a second call does nothing.
    inj.rolledBack = true;
    const r = await this.ask<{ note: string | null; detail: Record<string, unknown> }>(owner, inj.node_id, 'chaos.rollback', { injection: { ...inj, rolledBack: false }, actor });
    inj.detail = r.detail;
    return r.note;
  }

  async state(nodeId: string): Promise<FaultState | null> {
    const owner = this.owner(nodeId);
    if (!owner) return localState(this.mesh, nodeId);
    return (await this.ask<{ state: FaultState | null }>(owner, nodeId, 'chaos.state', {})).state;
  }

  async crash(nodeId: string, max: number, signal: AbortSignal): Promise<number | null> {
    const owner = this.owner(nodeId);
    if (!owner) return crashTick(this.mesh, nodeId, max, signal);
    return (await this.ask<{ ended: number | null }>(owner, nodeId, 'chaos.crash', { max }, { timeoutMs: CRASH_WAIT_MS })).ended;
  }

  /**
   * The domains this host probes. On a single host, every target it runs. In a cluster, only
   * those it has an active node of: a host without one forwards the kernel's tasks to another
   * (docs/scale-out.md), so its own failures would not be the callers'. When no host has an
   * active node, no host probes and the round has no samples, which does not hold.
   */
  private probed(domains: string[]): string[] {
    const here = domains.filter((d) => this.mesh.kernelIds().includes(d));
    if (!this.mesh.bus) return here;
    return here.filter((d) => this.mesh.kernelOf(d).nodes.some((n) => n.state === 'active'));
  }

  /**
   * A probe round on every host that runs a target kernel: each probes its own nodes, so a
   * domain's samples are `count` per host that has an active node of it. A host that does
   * not answer adds no samples (its nodes are judged by the others' probes and by its lease).
   */
  async probe(domains: string[], cfg: ProbeConfig, signal?: AbortSignal): Promise<Map<string, Sample[]>> {
    const rounds = [probeRound(this.mesh, this.probed(domains), cfg, signal)];
    const roundMs = cfg.timeoutMs * Math.ceil(cfg.count / Math.max(1, cfg.concurrency));
    if (this.mesh.bus) {
      const peers = new Set(this.mesh.remoteNodes().filter((n) => n.state !== 'lost' && n.host && domains.includes(n.kernel_id)).map((n) => n.host!));
      for (const host of peers) {
        rounds.push(
          this.ask<{ samples: Record<string, Sample[]> }>(host, host, 'chaos.probe', { domains, cfg }, { what: `probes of ${domains.join(', ')}`, timeoutMs: roundMs })
            .then((r) => new Map(Object.entries(r.samples)))
            .catch(() => new Map<string, Sample[]>()),
        );
      }
    }
    const out = new Map<string, Sample[]>(domains.map((d) => [d, []]));
    for (const round of await Promise.all(rounds)) for (const [d, s] of round) out.get(d)?.push(...s);
    return out;
  }
}
