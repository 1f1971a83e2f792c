// A host with the plugins of the autonomous/agi/copilot/enterprise group and the ones they
// read (mesh, kernels, workflows, incidents, observability's event store), on the analytics and trading kernels.
import agi from '../../../plugins/agi';
import autonomous from '../../../plugins/autonomous';
import copilot from '../../../plugins/copilot';
import enterprise from '../../../plugins/enterprise';
import incidents from '../../../plugins/incidents';
import kernels from '../../../plugins/kernels';
import llm from '../../../plugins/llm';
import mesh from '../../../plugins/mesh';
import observability from '../../../plugins/observability';
import workflows from '../../../plugins/workflows';
import { BUILTIN_KERNELS } from '../../core/mesh-helpers';
import { eventually } from '../../helpers/eventually';
import { startHost, type DbKind, type StartOptions, type TestHost } from '../../helpers/host';

export const MISSING = '00000000-0000-4000-8000-000000000000';

export function startGroupHost(config: Record<string, unknown> = {}, db: DbKind = 'sqlite', overrides?: StartOptions['overrides']): Promise<TestHost> {
  return startHost({
    db,
    overrides,
    plugins: [mesh, kernels, workflows, incidents, llm, observability, agi, autonomous, copilot, enterprise],
    config: { ...config, mesh: { kernelDirs: [BUILTIN_KERNELS], only: ['analytics', 'trading'], heartbeatMs: 100, noNodeWaitMs: 300, ...((config.mesh as object) ?? {}) } },
  });
}

/** Creates a workflow and returns its id. */
export async function workflow(t: TestHost, token: string, name: string, steps: unknown[]): Promise<string> {
  const r = await t.request('POST', '/workflows', { token, body: { name, steps } });
  if (r.status !== 201) throw new Error(`workflow not created: ${r.status} ${r.text}`);
  return r.body.id;
}

/** Runs a workflow and waits for it to finish. */
export async function runToEnd(t: TestHost, token: string, id: string) {
  const r = await t.request('POST', `/workflows/${id}/run`, { token });
  if (r.status !== 202) throw new Error(`workflow not started: ${r.status} ${r.text}`);
  return eventually(async () => {
    const e = await t.request('GET', `/ops/workflows/${r.body.id}`, { token });
    return ['succeeded', 'failed', 'cancelled'].includes(e.body.state) && e.body;
  }, 10_000);
}

/** Polls a resource until its state is final. */
export function settled(t: TestHost, token: string, path: string, states = ['succeeded', 'failed']) {
  return eventually(async () => {
    const r = await t.request('GET', path, { token });
    return states.includes(r.body.state) && r.body;
  }, 20_000);
}

export const ok = [{ id: 's1', kernel: 'analytics', task: 'describe', input: { values: [1, 2, 3] } }];
export const failing = [{ id: 's1', kernel: 'analytics', task: 'regression', input: { x: [1, 1], y: [1, 2] } }];
