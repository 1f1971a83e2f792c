import { chaosEngineRef } from '../../plugins/chaos/engine/service';
import type { Definition } from '../../plugins/chaos/engine/service';
import type { Experiment } from '../../plugins/chaos/engine/schemas';
import { startHost, type DbKind, type StartOptions, type TestHost } from '../helpers/host';
import chaosPlugin from '../../plugins/chaos';
import { BUILTIN_KERNELS, FIXTURE_KERNELS, MESH_PLUGINS, until } from '../core/mesh-helpers';

/** Fast probes and short waits so that each experiment takes a second or two. */
export const FAST_CHAOS = { probes: { count: 8, concurrency: 2, intervalMs: 50, timeoutMs: 1500 }, recoveryTimeoutSeconds: 10, leaseMs: 600, validation: { durationSeconds: 1, latencyMs: 40, maxTotalSeconds: 20 } };

/** probe (2 nodes × 2 threads) and textstats (1 × 1), fast heartbeats, the chaos plugin. */
export function startChaosHost(db: DbKind = 'sqlite', chaos: Record<string, unknown> = {}, opts: Partial<StartOptions> = {}): Promise<TestHost> {
  return startHost({
    db,
    plugins: [...MESH_PLUGINS, chaosPlugin],
    config: {
      mesh: { kernelDirs: [BUILTIN_KERNELS, FIXTURE_KERNELS], only: ['probe', 'textstats'], heartbeatMs: 100, noNodeWaitMs: 300, kernels: { probe: { nodes: 2, threads: 2 }, textstats: { nodes: 1, threads: 1 } } },
      chaos: { ...FAST_CHAOS, ...chaos },
    },
    ...opts,
  });
}

export function def(over: Partial<Definition> & Pick<Definition, 'injection_type' | 'parameters'>): Definition {
  return {
    scenario_id: null,
    scenario_name: `test ${over.injection_type}`,
    kind: 'scenario',
    target_domains: ['probe'],
    duration_seconds: 1,
    hypothesis: { description: 'test', min_success_ratio: 0.95, max_latency_p99_ms: 100 },
    ...over,
  };
}

export async function ended(t: TestHost, id: string, tenantId = 'platform', ms = 15_000): Promise<Experiment> {
  return (await until(async () => {
    const e = await t.host.service(chaosEngineRef).get(tenantId, id);
    return e.status !== 'running' ? e : null;
  }, ms, `experiment ${id} to end`))!;
}

export async function phase(t: TestHost, id: string, p: string, tenantId = 'platform'): Promise<Experiment> {
  return (await until(async () => {
    const e = await t.host.service(chaosEngineRef).get(tenantId, id);
    return e.phase === p || e.status !== 'running' ? e : null;
  }, 10_000, `experiment ${id} to reach ${p}`))!;
}
