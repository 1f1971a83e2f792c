// The mesh operations as governed action kinds: the same calls /mesh and /kernels make,
// recorded in the action log with who asked and why.
import type { Mesh } from '../../core/mesh/mesh';
import { invalid } from '../../core/errors';
import type { ActionKind, ProposedAction } from '../../core/contracts/governance';
import type { Caller } from '../../core/roles';

function int(a: ProposedAction, key: string, min: number, max: number, optional = false): number | undefined {
  const v = a.params[key];
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw invalid(['body', 'params', key], `${key} must be a whole number from ${min} to ${max}`);
  return v;
}

export function meshKinds(mesh: Mesh): ActionKind[] {
  const actor = (c: Caller, reason?: unknown) => ({ source: c.id.startsWith('agent:') ? ('automated' as const) : ('manual' as const), actor: c.id, cause: typeof reason === 'string' ? reason : null });
  const nodeBlast = (a: ProposedAction, leaves: boolean) => {
    const { node, kernel } = mesh.nodeOf(a.target);
    const active = kernel.nodes.filter((n) => n.state === 'active').length;
    return { affected: 1, of: kernel.nodes.length, active_after: leaves ? active - (node.state === 'active' ? 1 : 0) : active + (node.state === 'active' ? 0 : 1) };
  };
  const kernelBlast = (a: ProposedAction, leaves: boolean) => {
    const k = mesh.kernelOf(a.target);
    return { affected: k.nodes.length, of: k.nodes.length, active_after: leaves ? 0 : k.nodes.length };
  };
  const node = (kind: string, summary: string, leaves: boolean, run: (c: Caller, a: ProposedAction) => Promise<unknown>): ActionKind => ({
    kind, summary, role: 'operator', blast: (a) => nodeBlast(a, leaves), check: (_c, a) => void mesh.nodeOf(a.target), run,
  });
  const kernel = (kind: string, summary: string, leaves: boolean, run: (c: Caller, a: ProposedAction) => Promise<unknown>): ActionKind => ({
    kind, summary, role: 'operator', blast: (a) => kernelBlast(a, leaves), check: (_c, a) => void mesh.kernelOf(a.target), run,
  });
  return [
    node('pause_node', 'Pause a node: no new tasks, in-flight ones go on', true, (c, a) => mesh.pauseNode(a.target, actor(c, a.params.reason))),
    node('resume_node', 'Resume a paused or drained node', false, (c, a) => mesh.resumeNode(a.target, actor(c, a.params.reason))),
    {
      ...node('drain_node', 'Drain a node: no new tasks, waits for in-flight ones, then its threads end', true, (c, a) => mesh.drainNode(a.target, { deadline_seconds: int(a, 'deadline_seconds', 1, 86_400, true) }, actor(c, a.params.reason))),
      check: (_c, a) => {
        mesh.nodeOf(a.target);
        int(a, 'deadline_seconds', 1, 86_400, true);
      },
    },
    node('remove_node', 'Remove a drained node', true, async (c, a) => {
      await mesh.removeNode(a.target, actor(c, a.params.reason));
      return { removed: a.target };
    }),
    {
      kind: 'add_node',
      summary: 'Add a node to a kernel (target: the kernel id; params.threads optional)',
      role: 'operator',
      blast: (a) => {
        const k = mesh.kernelOf(a.target);
        return { affected: 1, of: k.nodes.length + 1, active_after: k.nodes.filter((n) => n.state === 'active').length + 1 };
      },
      threads: (a) => (a.params.threads as number | undefined) ?? mesh.cfg.threadsPerNode ?? mesh.kernelOf(a.target).manifest.threadsPerNode,
      check: (_c, a) => {
        mesh.kernelOf(a.target);
        int(a, 'threads', 1, 64, true);
      },
      run: (c, a) => mesh.addNode(a.target, actor(c, a.params.reason), a.params.threads as number | undefined),
    },
    {
      kind: 'set_threads',
      summary: "Set a node's thread count (params.threads)",
      role: 'operator',
      blast: (a) => nodeBlast(a, false),
      threads: (a) => Math.max(0, (a.params.threads as number) - mesh.nodeOf(a.target).node.threads),
      check: (_c, a) => {
        mesh.nodeOf(a.target);
        int(a, 'threads', 1, 64);
      },
      run: (c, a) => mesh.setThreads(a.target, a.params.threads as number, actor(c, a.params.reason)),
    },
    kernel('pause_kernel', 'Pause every node of a kernel', true, (c, a) => mesh.pauseKernel(a.target, actor(c, a.params.reason))),
    kernel('resume_kernel', 'Resume every node of a kernel', false, (c, a) => mesh.resumeKernel(a.target, actor(c, a.params.reason))),
    kernel('drain_kernel', 'Drain every node of a kernel', true, (c, a) => mesh.drainKernel(a.target, {}, actor(c, a.params.reason))),
  ];
}

/** Threads the mesh may still start (mesh.maxThreads less those of every node not drained). */
export function threadBudget(mesh: Mesh): number {
  let used = 0;
  for (const { node } of mesh.nodeMap.values()) if (node.state !== 'drained') used += node.threads;
  return Math.max(0, mesh.cfg.maxThreads - used);
}
