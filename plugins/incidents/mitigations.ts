import type { Mesh } from '../../core/mesh/mesh';
import type { ActionActor } from '../../core/mesh/types';

const KERNEL_ID = /^[a-z][a-z0-9_-]{0,63}$/;
const NODE_ID = /^[a-z][a-z0-9_-]{0,63}-[1-9][0-9]{0,5}$/;

interface Mitigation {
  /** What the target names, and its form, checked before anything is done. */
  target: 'kernel' | 'node';
  pattern: RegExp;
  run(mesh: Mesh, target: string, actor: ActionActor): Promise<unknown>;
}

/** Mitigation name -> what it does on the mesh (services.mesh). Adding a mitigation is one line here. */
export const MITIGATIONS = {
  pause_kernel: { target: 'kernel', pattern: KERNEL_ID, run: async (m, id, a) => m.pauseKernel(id, a) },
  isolate_kernel: { target: 'kernel', pattern: KERNEL_ID, run: async (m, id, a) => m.isolateKernel(id, a) },
  drain_node: { target: 'node', pattern: NODE_ID, run: async (m, id, a) => m.drainNode(id, {}, a) },
  // A restart drains the node, ends the drain (aborting what is left) and resumes it with fresh threads.
  restart_node: {
    target: 'node',
    pattern: NODE_ID,
    run: async (m, id, a) => {
      await m.drainNode(id, {}, a);
      await m.completeDrain(id, { force: true }, a);
      return m.resumeNode(id, a);
    },
  },
} satisfies Record<string, Mitigation>;

export type MitigationName = keyof typeof MITIGATIONS;
export const MITIGATION_NAMES = Object.keys(MITIGATIONS) as [MitigationName, ...MitigationName[]];
