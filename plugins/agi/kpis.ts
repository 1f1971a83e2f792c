// The platform's KPIs, measured from stored state: task outcomes (kernels), incidents,
// workflow executions, telemetry costs and the action log. Nothing is estimated here.
import type { Config } from '../../core/config';
import type { Db } from '../../core/db';
import { invalid } from '../../core/errors';
import type { Mesh } from '../../core/mesh/mesh';
import { outcomeCounts, outcomePercentiles } from '../../core/mesh/outcomes';
import { METRICS, type KpiService, type KpiSnapshot, type Measurement, type Metric } from '../../core/contracts/insights';

const DEFAULT_WINDOW = 3600;
const round = (x: number | null, d = 6) => (x === null ? null : Math.round(x * 10 ** d) / 10 ** d);

export class Kpis implements KpiService {
  /** Tables of other plugins (incidents, workflows) exist only when those plugins are loaded. */
  private readonly tables = new Map<string, Promise<boolean>>();

  constructor(
    private readonly db: Db,
    private readonly mesh: Mesh,
    private readonly config: Config,
    private readonly clock: { now(): Date },
  ) {}

  private has(table: string): Promise<boolean> {
    let p = this.tables.get(table);
    if (!p) this.tables.set(table, (p = this.db.schema.hasTable(table)));
    return p;
  }

  private window(params: Record<string, unknown>) {
    const seconds = Number(params.window_seconds ?? DEFAULT_WINDOW);
    if (!Number.isFinite(seconds) || seconds <= 0) throw invalid(['body', 'params', 'window_seconds'], 'a positive number of seconds');
    const until = this.clock.now();
    return { since: new Date(until.getTime() - seconds * 1000).toISOString(), until: until.toISOString(), seconds };
  }

  private kernel(params: Record<string, unknown>): string {
    const k = typeof params.kernel === 'string' ? params.kernel : '';
    if (!this.mesh.kernelMap.has(k)) throw invalid(['body', 'params', 'kernel'], `unknown kernel "${k}"; known: ${[...this.mesh.kernelMap.keys()].join(', ')}`);
    return k;
  }

  slo(kernel: string) {
    const o = this.config.slo.domains[kernel] ?? this.config.slo.default;
    return { availability: o.availability, latency_p99_ms: o.latencyP99Ms };
  }

  async measure(tenantId: string, metric: Metric, params: Record<string, unknown> = {}): Promise<Measurement> {
    if (!METRICS.includes(metric)) throw invalid(['body', 'metric'], `unknown metric "${metric}"; known: ${METRICS.join(', ')}`);
    const w = this.window(params);
    const window = { since: w.since, until: w.until };
    const out = (value: number | null, source: string, win: typeof window | null = window): Measurement => ({ metric, params, value: round(value), source, window: win });
    switch (metric) {
      case 'kernel_active_nodes': {
        const k = this.mesh.kernel(this.kernel(params));
        return out(k.nodes.filter((n) => n.state === 'active').length, 'mesh', null);
      }
      case 'kernel_tasks':
      case 'kernel_error_rate':
      case 'kernel_slo_burn_rate': {
        const kernelId = this.kernel(params);
        await this.mesh.outcomesWriter.flush();
        const c = await outcomeCounts(this.db, { kernelId, since: w.since });
        if (metric === 'kernel_tasks') return out(c.tasks, 'task_outcomes');
        const rate = c.tasks ? c.failed / c.tasks : null;
        if (metric === 'kernel_error_rate') return out(rate, 'task_outcomes');
        return out(rate === null ? null : rate / (1 - this.slo(kernelId).availability), 'task_outcomes');
      }
      case 'kernel_latency_p95_ms':
      case 'kernel_queue_wait_p95_ms': {
        const kernelId = this.kernel(params);
        await this.mesh.outcomesWriter.flush();
        const c = await outcomeCounts(this.db, { kernelId, since: w.since });
        const ps = await outcomePercentiles(this.db, { kernelId, since: w.since }, metric === 'kernel_latency_p95_ms' ? 'duration_ms' : 'wait_ms', [95], c.tasks);
        return out(ps ? ps[0]! : null, 'task_outcomes');
      }
      case 'tenant_tasks':
      case 'tenant_task_success_rate': {
        await this.mesh.outcomesWriter.flush();
        const row = (await this.db('task_outcomes').where('tenant_id', tenantId).andWhere('at', '>=', w.since).select(this.db.raw('count(*) as n'), this.db.raw('sum(case when ok then 1 else 0 end) as ok')).first()) as { n: unknown; ok: unknown } | undefined;
        const n = Number(row?.n ?? 0);
        return out(metric === 'tenant_tasks' ? n : n ? Number(row?.ok ?? 0) / n : null, 'task_outcomes');
      }
      case 'open_incidents': {
        if (!(await this.has('incidents'))) return out(0, 'incidents (plugin not loaded)', null);
        const row = (await this.db('incidents').where((q) => q.where('tenant_id', tenantId).orWhereNull('tenant_id')).whereIn('state', ['open', 'mitigated']).count({ n: '*' }).first()) as { n: unknown } | undefined;
        return out(Number(row?.n ?? 0), 'incidents', null);
      }
      case 'workflow_runs':
      case 'workflow_failure_rate':
      case 'workflow_duration_p95_ms': {
        if (!(await this.has('workflow_executions'))) return out(metric === 'workflow_runs' ? 0 : null, 'workflow_executions (plugin not loaded)');
        const q = this.db('workflow_executions').where('tenant_id', tenantId).whereIn('state', ['succeeded', 'failed']).andWhere('finished_at', '>=', w.since);
        if (typeof params.workflow_id === 'string' && params.workflow_id) q.andWhere('workflow_id', params.workflow_id);
        const rows = (await q.select('state', 'started_at', 'finished_at').orderBy('finished_at', 'desc').limit(10_000)) as Array<{ state: string; started_at: string | null; finished_at: string }>;
        if (metric === 'workflow_runs') return out(rows.length, 'workflow_executions');
        if (metric === 'workflow_failure_rate') return out(rows.length ? rows.filter((r) => r.state === 'failed').length / rows.length : null, 'workflow_executions');
        const d = rows.filter((r) => r.started_at).map((r) => Date.parse(r.finished_at) - Date.parse(r.started_at!)).sort((a, b) => a - b);
        return out(d.length ? d[Math.min(d.length - 1, Math.ceil(0.95 * d.length) - 1)]! : null, 'workflow_executions');
      }
      case 'cost_usd': {
        const row = (await this.db('telemetry_events').where('tenant_id', tenantId).andWhere('ts', '>=', w.since).sum({ s: 'cost_usd' }).first()) as { s: unknown } | undefined;
        return out(Number(row?.s ?? 0), 'telemetry_events');
      }
      case 'manual_actions': {
        const users = this.db('users').select('id').where('tenant_id', tenantId);
        const row = (await this.db('actions').where('source', 'manual').andWhere('created_at', '>=', w.since).andWhere((q) => q.where('tenant_id', tenantId).orWhereIn('actor', users)).count({ n: '*' }).first()) as { n: unknown } | undefined;
        return out(Number(row?.n ?? 0), 'actions');
      }
    }
  }

  async snapshot(tenantId: string, windowSeconds: number): Promise<KpiSnapshot> {
    const p = { window_seconds: windowSeconds };
    const w = this.window(p);
    const tenantMetrics = ['tenant_tasks', 'tenant_task_success_rate', 'open_incidents', 'workflow_runs', 'workflow_failure_rate', 'workflow_duration_p95_ms', 'cost_usd', 'manual_actions'] as const;
    const tenant = {} as KpiSnapshot['tenant'];
    for (const m of tenantMetrics) tenant[m] = (await this.measure(tenantId, m, p)).value;
    const kernels: KpiSnapshot['kernels'] = [];
    for (const id of [...this.mesh.kernelMap.keys()].sort()) {
      const k = this.mesh.kernel(id);
      const kp = { ...p, kernel: id };
      const active = k.nodes.filter((n) => n.state === 'active');
      kernels.push({
        kernel: id,
        tasks: (await this.measure(tenantId, 'kernel_tasks', kp)).value ?? 0,
        error_rate: (await this.measure(tenantId, 'kernel_error_rate', kp)).value,
        latency_p95_ms: (await this.measure(tenantId, 'kernel_latency_p95_ms', kp)).value,
        queue_wait_p95_ms: (await this.measure(tenantId, 'kernel_queue_wait_p95_ms', kp)).value,
        active_nodes: active.length,
        threads: active.reduce((a, n) => a + n.threads, 0),
        slo_burn_rate: (await this.measure(tenantId, 'kernel_slo_burn_rate', kp)).value,
        slo: this.slo(id),
      });
    }
    return { window: { since: w.since, until: w.until, seconds: w.seconds }, tenant, kernels };
  }
}
