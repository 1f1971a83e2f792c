import { z } from 'zod';
import { Conflict, invalid, NotFound } from '../../core/errors';
import type { ChaosRuns } from '../../core/contracts/chaos';
import type { Caller } from '../../core/roles';
import type { Services } from '../../core/services';
import { runLoad } from './load';
import type { LoadResult } from './load-worker';
import type { Run, Runs } from './store';

export const target = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('kernel_task'), domain: z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/), task: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/), input: z.unknown().default({}) }),
  // GET only: load on a route must not create objects or change state.
  z.object({ kind: z.literal('route'), method: z.literal('GET').default('GET'), path: z.string().regex(/^\/[A-Za-z0-9_\-./?=&%]*$/, 'a path of this service, e.g. /health/').max(300).refine((p) => !p.includes('//') && !p.includes('..'), 'a plain path') }),
]);

export const bounds = {
  rate_per_second: z.number().int().min(1).max(200),
  duration_seconds: z.number().int().min(1).max(60),
  concurrency: z.number().int().min(1).max(32),
};

export const stressBody = z.union([
  z.object({ scenario_id: z.string().min(1).max(64) }).strict(),
  z.object({ name: z.string().trim().min(1).max(200).optional(), target, ...bounds }).strict(),
]);

export const scenario = z.object({ id: z.string(), name: z.string(), description: z.string(), target, ...bounds });
export type Scenario = z.output<typeof scenario>;
type Definition = { name: string; scenario_id: string | null; target: z.output<typeof target>; rate_per_second: number; duration_seconds: number; concurrency: number };

/** Built-in scenario definitions (stored at migration; a definition, not a measurement). */
export const BUILT_IN: Scenario[] = [
  { id: 'analytics-describe-steady', name: 'Analytics describe, steady', description: 'describe over 1,000 values at 50 tasks/s for 10 s, 8 in flight at most', target: { kind: 'kernel_task', domain: 'analytics', task: 'describe', input: { values: Array.from({ length: 1000 }, (_, i) => i) } }, rate_per_second: 50, duration_seconds: 10, concurrency: 8 },
  { id: 'analytics-describe-spike', name: 'Analytics describe, spike', description: 'describe over 1,000 values at 200 tasks/s for 5 s, 32 in flight at most', target: { kind: 'kernel_task', domain: 'analytics', task: 'describe', input: { values: Array.from({ length: 1000 }, (_, i) => i) } }, rate_per_second: 200, duration_seconds: 5, concurrency: 32 },
  { id: 'api-health-steady', name: 'Health endpoint, steady', description: 'GET /health/ at 50 requests/s for 10 s, 8 in flight at most', target: { kind: 'route', method: 'GET', path: '/health/' }, rate_per_second: 50, duration_seconds: 10, concurrency: 8 },
];

export async function seedScenarios(services: Pick<Services, 'db'>): Promise<void> {
  for (const s of BUILT_IN) {
    const row = { id: s.id, name: s.name, description: s.description, target: JSON.stringify(s.target), rate_per_second: s.rate_per_second, duration_seconds: s.duration_seconds, concurrency: s.concurrency };
    await services.db('stress_scenarios').insert(row).onConflict('id').ignore();
  }
}

export async function listScenarios(services: Pick<Services, 'db'>): Promise<Scenario[]> {
  const rows = await services.db('stress_scenarios').orderBy('id');
  return rows.map((r) => ({ ...r, target: JSON.parse(r.target) }));
}

/** 409 while a chaos experiment runs on any host: a stress test over injected faults measures neither. */
export async function refuseOverChaos(chaos: ChaosRuns): Promise<void> {
  const [live] = await chaos.active();
  if (live) throw new Conflict(`chaos experiment ${live.id} (${live.injection_type} on ${live.target_domains.join(', ')}) is running; a stress test waits for it to end`, 'CHAOS_ACTIVE');
}

export class StressTests {
  private current: AbortController | null = null;

  constructor(
    private readonly services: Pick<Services, 'db' | 'mesh' | 'auth' | 'events'> & { chaos: ChaosRuns },
    private readonly runs: Runs,
  ) {}

  async start(body: z.output<typeof stressBody>, caller: Caller, base: string): Promise<Run> {
    let def: Definition;
    if ('scenario_id' in body) {
      const s = (await listScenarios(this.services)).find((x) => x.id === body.scenario_id);
      if (!s) throw new NotFound(`stress scenario ${body.scenario_id} not found`);
      def = { name: s.name, scenario_id: s.id, target: s.target, rate_per_second: s.rate_per_second, duration_seconds: s.duration_seconds, concurrency: s.concurrency };
    } else def = { name: body.name ?? `${body.target.kind === 'route' ? body.target.path : `${body.target.domain}.${body.target.task}`} at ${body.rate_per_second}/s`, scenario_id: null, target: body.target, rate_per_second: body.rate_per_second, duration_seconds: body.duration_seconds, concurrency: body.concurrency };
    const loc = 'scenario_id' in body ? ['body', 'scenario_id'] : ['body', 'target'];
    if (def.target.kind === 'kernel_task') {
      const k = this.services.mesh.kernelMap.get(def.target.domain);
      if (!k) throw invalid([...loc, 'domain'], `unknown kernel "${def.target.domain}"`);
      const issues = this.services.mesh.validateInput(def.target.domain, def.target.task, def.target.input);
      if (issues.length) throw invalid([...loc, 'input'], issues.map((i) => i.msg).join('; '));
    }
    await refuseOverChaos(this.services.chaos);
    if (this.current || (await this.runs.list('stress_test', caller.tenantId, 1, 'running')).length) throw new Conflict('a stress test is already running on this host; one at a time keeps the load bounded', 'STRESS_TEST_RUNNING');
    const run = await this.runs.create('stress_test', caller.tenantId, def, caller.id);
    this.current = new AbortController();
    void this.execute(run, def, caller, base, this.current.signal).finally(() => (this.current = null));
    return run;
  }

  stop(): void {
    this.current?.abort();
  }

  scenarios(): Promise<Scenario[]> {
    return listScenarios(this.services);
  }

  private async execute(run: Run, def: Definition, caller: Caller, base: string, signal: AbortSignal): Promise<void> {
    const { mesh, auth, events } = this.services;
    const running = await this.runs.move(run, 'running');
    const t = def.target;
    const domains = t.kind === 'kernel_task' ? [t.domain] : [...mesh.kernelMap.keys()];
    const token = auth.sign({ id: caller.id, tenantId: caller.tenantId, role: caller.role, email: caller.email }, def.duration_seconds + 120).token;
    const samples: Array<{ queued: number; in_flight: number }> = [];
    const trips: Array<{ kernel_id: string; at: string }> = [];
    const worst = new Map<string, string>();
    const rank = ['healthy', 'unknown', 'degraded', 'unhealthy'];
    const sample = () => {
      let queued = 0;
      let inFlight = 0;
      for (const d of domains) {
        const k = mesh.kernels().find((x) => x.id === d);
        for (const n of k?.nodes ?? []) {
          queued += n.queued;
          inFlight += n.in_flight;
          if (rank.indexOf(n.health) > rank.indexOf(worst.get(n.id) ?? 'healthy')) worst.set(n.id, n.health);
        }
      }
      samples.push({ queued, in_flight: inFlight });
    };
    const off = events.subscribe('breaker_state', (e) => {
      const d = e.data as { kernel_id: string; state: string };
      if (d.state === 'open' && domains.includes(d.kernel_id)) trips.push({ kernel_id: d.kernel_id, at: e.timestamp });
    });
    sample();
    const timer = setInterval(sample, 250);
    try {
      const load: LoadResult = await runLoad(
        {
          url: base + (t.kind === 'route' ? t.path : `/kernels/${t.domain}/tasks/${t.task}`),
          method: t.kind === 'route' ? 'GET' : 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: t.kind === 'route' ? null : JSON.stringify(t.input ?? {}),
          rate: def.rate_per_second,
          durationMs: def.duration_seconds * 1000,
          concurrency: def.concurrency,
        },
        signal,
      );
      sample();
      const nodes = mesh.kernels().filter((k) => domains.includes(k.id)).flatMap((k) => k.nodes);
      const kernel = t.kind === 'kernel_task' ? mesh.kernels().find((k) => k.id === t.domain) : undefined;
      const errorCount = Object.values(load.errors).reduce((a, b) => a + b, 0);
      const errorRate = load.sent ? errorCount / load.sent : 0;
      const result = {
        load,
        error_rate: Math.round(errorRate * 10_000) / 10_000,
        mesh: {
          kernels: domains,
          samples: samples.length,
          max_queue_depth: Math.max(...samples.map((s) => s.queued)),
          mean_queue_depth: Math.round((samples.reduce((a, s) => a + s.queued, 0) / samples.length) * 100) / 100,
          max_in_flight: Math.max(...samples.map((s) => s.in_flight)),
          breaker_trips: trips,
          node_health: nodes.map((n) => ({ node_id: n.id, health: n.health, worst_during_test: worst.get(n.id) ?? n.health })),
        },
        slo: kernel ? { latency_p95_ms: kernel.slo.latency_p95_ms, error_rate: kernel.slo.error_rate, met: load.latency_ms !== null && load.latency_ms.p95 <= kernel.slo.latency_p95_ms && errorRate <= kernel.slo.error_rate } : null,
        method: 'open-loop load from a worker thread over loopback HTTP at a fixed start rate; requests beyond the concurrency bound are dropped, not queued; latency is measured per answered request; the mesh is sampled every 250 ms',
      };
      await this.runs.move(running, 'succeeded', { result });
    } catch (err) {
      await this.runs.move(running, signal.aborted ? 'cancelled' : 'failed', { error: (err as Error).message }).catch(() => undefined);
    } finally {
      clearInterval(timer);
      off();
    }
  }
}
