// What-if simulations. Scenarios follow the live platform: for every kernel a load change
// and the loss of a node, and for the tenant a price change. A run fits the model to
// measured data (inter-arrival and service times of the kernel's task outcomes; the tenant's
// daily cost) and runs on the analytics kernel with a recorded seed; `repeat_of` runs a stored
// result's inputs and seed again, which gives the same figures exactly.
import crypto from 'node:crypto';
import type { ActionLog } from '../../core/actions';
import type { Config } from '../../core/config';
import type { Db } from '../../core/db';
import { errorText, invalid, NotFound } from '../../core/errors';
import type { EventBus } from '../../core/events';
import type { Mesh } from '../../core/mesh/mesh';
import type { Caller } from '../../core/roles';
import { TenantScope } from '../../core/tenancy';
import { insufficient } from './errors';

export const SIM_STATES = ['queued', 'running', 'succeeded', 'failed'] as const;
const MAX_SAMPLES = 10_000;

export interface Scenario {
  id: string;
  kind: 'load' | 'node_loss' | 'price';
  name: string;
  description: string;
  kernel: string | null;
  defaults: Record<string, number>;
}

export interface RunBody {
  seed?: number;
  factor?: number;
  nodes_lost?: number;
  replications?: number;
  tasks?: number;
  window_seconds?: number;
  horizon_days?: number;
  repeat_of?: string;
}

type Job = { kernel: 'analytics'; task: 'simulate_queue' | 'simulate_totals'; baseline: Record<string, unknown>; scenario: Record<string, unknown> };

function toResult(r: Record<string, any>) {
  return { id: r.id, tenant_id: r.tenant_id, scenario_id: r.scenario_id, state: r.state, seed: r.seed, inputs: r.inputs ? JSON.parse(r.inputs) : null, result: r.result ? JSON.parse(r.result) : null, error: r.error ?? null, created_by: r.created_by, created_at: r.created_at, started_at: r.started_at ?? null, finished_at: r.finished_at ?? null };
}
export type SimResult = ReturnType<typeof toResult>;

export class Simulations {
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    private readonly db: Db,
    private readonly mesh: Mesh,
    private readonly config: Config,
    private readonly events: EventBus,
    private readonly actions: ActionLog,
    private readonly clock: { now(): Date },
  ) {}

  scenarios(): Scenario[] {
    const out: Scenario[] = [];
    for (const k of [...this.mesh.kernelMap.keys()].sort()) {
      out.push({ id: `load:${k}`, kind: 'load', name: `Load x N on ${k}`, description: `Arrivals of ${k}'s tasks multiplied by factor; latency and queueing against its SLO`, kernel: k, defaults: { factor: 2, window_seconds: 3600, tasks: 2000, replications: 20 } });
      out.push({ id: `node_loss:${k}`, kind: 'node_loss', name: `Nodes lost on ${k}`, description: `${k} loses nodes_lost nodes (the largest first) at today's load`, kernel: k, defaults: { nodes_lost: 1, window_seconds: 3600, tasks: 2000, replications: 20 } });
    }
    out.push({ id: 'price:cost', kind: 'price', name: 'Price change', description: "The tenant's daily cost (telemetry cost_usd) with prices multiplied by factor, over horizon_days", kernel: null, defaults: { factor: 1.1, window_seconds: 30 * 86400, horizon_days: 30, replications: 2000 } });
    return out;
  }

  scenario(id: string): Scenario {
    const s = this.scenarios().find((x) => x.id === id);
    if (!s) throw new NotFound('Scenario not found');
    return s;
  }

  private since(seconds: number) {
    return new Date(this.clock.now().getTime() - seconds * 1000).toISOString();
  }

  /** Fits the scenario's model to measured data: the inputs of the kernel task. */
  private async fit(s: Scenario, b: RunBody, seed: number, tenantId: string): Promise<Job> {
    const p = { ...s.defaults, ...clean(b) };
    if (s.kind === 'price') return this.fitPrice(p, seed, tenantId);
    const kernel = s.kernel!;
    await this.mesh.outcomesWriter.flush();
    const rows = (await this.db('task_outcomes').where('kernel_id', kernel).andWhere('at', '>=', this.since(p.window_seconds!)).orderBy('seq', 'desc').limit(MAX_SAMPLES).select('at', 'duration_ms')) as Array<{ at: string; duration_ms: number }>;
    if (rows.length < 10) throw insufficient(`${rows.length} task outcome(s) of kernel ${kernel} in the last ${p.window_seconds} s; the model needs at least 10`);
    const times = rows.map((r) => Date.parse(r.at)).sort((a, b) => a - b);
    const interarrival = times.slice(1).map((t, i) => t - times[i]!);
    const service = rows.map((r) => r.duration_ms);
    const nodes = this.mesh.kernelOf(kernel).nodes.filter((n) => n.state === 'active').map((n) => n.threads).sort((a, b) => b - a);
    const servers = nodes.reduce((a, n) => a + n, 0);
    if (!servers) throw insufficient(`kernel ${kernel} has no active node to model`);
    const lost = s.kind === 'node_loss' ? nodes.slice(0, p.nodes_lost).reduce((a, n) => a + n, 0) : 0;
    if (servers - lost < 1) throw insufficient(`losing ${p.nodes_lost} node(s) leaves ${kernel} with no thread: nothing to simulate (every task would wait forever)`);
    const target = (this.config.slo.domains[kernel] ?? this.config.slo.default).latencyP99Ms;
    const common = { interarrival_ms: interarrival.length ? interarrival : [0], service_ms: service, tasks: p.tasks, replications: p.replications, latency_target_ms: target, seed };
    return {
      kernel: 'analytics',
      task: 'simulate_queue',
      baseline: { ...common, servers, load_factor: 1 },
      scenario: { ...common, servers: servers - lost, load_factor: s.kind === 'load' ? p.factor : 1 },
    };
  }

  private async fitPrice(p: Record<string, number>, seed: number, tenantId: string): Promise<Job> {
    const rows = (await this.db('telemetry_events').where('tenant_id', tenantId).andWhere('ts', '>=', this.since(p.window_seconds!)).whereNotNull('cost_usd').select('ts', 'cost_usd')) as Array<{ ts: string; cost_usd: number }>;
    const days = new Map<string, number>();
    for (const r of rows) days.set(r.ts.slice(0, 10), (days.get(r.ts.slice(0, 10)) ?? 0) + Number(r.cost_usd));
    if (!days.size) throw insufficient(`no telemetry cost (cost_usd) in the last ${p.window_seconds} s to fit daily cost`);
    const sample = [...days.keys()].sort().map((d) => days.get(d)!);
    const common = { sample, periods: p.horizon_days, replications: p.replications, seed };
    return { kernel: 'analytics', task: 'simulate_totals', baseline: { ...common, factor: 1 }, scenario: { ...common, factor: p.factor } };
  }

  async run(caller: Caller, scenarioId: string, b: RunBody): Promise<SimResult> {
    const s = this.scenario(scenarioId);
    if (s.kind !== 'price') {
      const p = { ...s.defaults, ...clean(b) };
      if (p.replications! > 200) throw invalid(['body', 'replications'], 'a queue scenario runs at most 200 replications');
      if (p.tasks! * p.replications! > 2_000_000) throw invalid(['body', 'tasks'], 'tasks x replications must stay within 2,000,000');
    }
    const scope = new TenantScope(this.db, caller.tenantId);
    let job: Job;
    let seed: number;
    if (b.repeat_of) {
      const prev = toResult(await scope.get('agi_sim_results', { id: b.repeat_of }, 'Simulation result'));
      if (prev.scenario_id !== s.id) throw new NotFound(`Simulation result ${b.repeat_of} is not a run of scenario ${s.id}`);
      job = prev.inputs as Job;
      seed = prev.seed;
    } else {
      // No seed given: one is drawn and recorded with the result, so the run can be repeated.
      seed = b.seed ?? crypto.randomInt(0, 2 ** 31 - 1);
      job = await this.fit(s, b, seed, caller.tenantId);
    }
    const at = this.clock.now().toISOString();
    const row = { id: crypto.randomUUID(), tenant_id: caller.tenantId, scenario_id: s.id, state: 'queued', seed, inputs: JSON.stringify(job), result: null, error: null, created_by: caller.id, started_at: null, finished_at: null, created_at: at, updated_at: at };
    await this.db('agi_sim_results').insert(row);
    await this.actions.record({ source: 'manual', actor: caller.id, action: 'run_simulation', target_type: 'simulation', target_id: row.id, result: 'succeeded', detail: { scenario_id: s.id, seed, repeat_of: b.repeat_of ?? null }, tenant_id: caller.tenantId });
    this.publish(row.id, caller.tenantId, s.id, 'queued');
    const p = this.execute(row.id, caller, s, job);
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
    return toResult(row);
  }

  private publish(id: string, tenantId: string, scenario: string, state: string) {
    this.events.publish('simulation_status', { result_id: id, tenant_id: tenantId, scenario_id: scenario, state });
  }

  private async execute(id: string, caller: Caller, s: Scenario, job: Job): Promise<void> {
    const now = () => this.clock.now().toISOString();
    try {
      await this.db('agi_sim_results').where({ id }).update({ state: 'running', started_at: now(), updated_at: now() });
      this.publish(id, caller.tenantId, s.id, 'running');
      const baseline = await this.mesh.run(job.kernel, job.task, job.baseline, { caller });
      const scenario = await this.mesh.run(job.kernel, job.task, job.scenario, { caller });
      const result = { scenario: s, method: (scenario as { method: string }).method, fitted: describeInputs(job), baseline, outcome: scenario };
      await this.db('agi_sim_results').where({ id }).update({ state: 'succeeded', result: JSON.stringify(result), finished_at: now(), updated_at: now() });
      this.publish(id, caller.tenantId, s.id, 'succeeded');
    } catch (err) {
      const msg = errorText(err);
      await this.db('agi_sim_results').where({ id }).update({ state: 'failed', error: msg, finished_at: now(), updated_at: now() }).catch(() => undefined);
      this.publish(id, caller.tenantId, s.id, 'failed');
    }
  }

  async result(caller: Caller, id: string): Promise<SimResult> {
    return toResult(await new TenantScope(this.db, caller.tenantId).get('agi_sim_results', { id }, 'Simulation result'));
  }

  async stop(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }
}

function clean(b: RunBody): Record<string, number> {
  return Object.fromEntries(Object.entries(b).filter(([k, v]) => v !== undefined && k !== 'repeat_of')) as Record<string, number>;
}

function describeInputs(job: Job) {
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const b = job.baseline as Record<string, any>;
  if (job.task === 'simulate_queue') return { interarrival_ms: { n: b.interarrival_ms.length, mean: mean(b.interarrival_ms) }, service_ms: { n: b.service_ms.length, mean: mean(b.service_ms) }, servers_now: b.servers, servers_in_scenario: (job.scenario as Record<string, any>).servers, load_factor: (job.scenario as Record<string, any>).load_factor };
  return { daily_cost_usd: { days: b.sample.length, mean: mean(b.sample) }, price_factor: (job.scenario as Record<string, any>).factor, horizon_days: b.periods };
}
