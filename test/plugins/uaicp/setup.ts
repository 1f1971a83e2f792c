import aiops from '../../../plugins/aiops';
import compute from '../../../plugins/compute';
import observability from '../../../plugins/observability';
import uaicp from '../../../plugins/uaicp';
import workflows from '../../../plugins/workflows';
import { BUILTIN_KERNELS } from '../../core/mesh-helpers';
import { eventually } from '../../helpers/eventually';
import { startHost, type DbKind, type TestHost } from '../../helpers/host';

export interface Group {
  t: TestHost;
  member: string;
  viewer: string;
  operator: string;
  /** A member of another tenant. */
  acme: string;
}

/** One host with the two groups, the plugins they read and three kernels (analytics with two nodes). */
export async function startGroup(config: Record<string, unknown> = {}, db: DbKind = 'sqlite'): Promise<Group> {
  const t = await startHost({
    db,
    plugins: [compute, aiops, uaicp, workflows, observability],
    config: {
      mesh: { kernelDirs: [BUILTIN_KERNELS], only: ['analytics', 'compute', 'llm'], kernels: { analytics: { nodes: 2 } }, heartbeatMs: 200 },
      ...config,
    },
  });
  return {
    t,
    member: (await t.userToken('member')).token,
    viewer: (await t.userToken('viewer')).token,
    operator: (await t.userToken('operator')).token,
    acme: (await t.userToken('member', 'acme')).token,
  };
}

/** Polls a job-like resource until it leaves queued/running. */
export async function settled(t: TestHost, path: string, token: string, ms = 20_000) {
  return eventually(async () => {
    const r = await t.request('GET', path, { token });
    return r.status === 200 && !['queued', 'running'].includes(r.body.state) ? r : null;
  }, ms);
}

export const MISSING = '00000000-0000-4000-8000-000000000000';
