// Enterprise KPIs: the platform KPI snapshot plus process figures, and per department the
// figures of what it owns: its processes, their workflows, and the kernels those workflows use.
import { z } from 'zod';
import { NotFound } from '../../core/errors';
import type { RouteMaker } from '../../core/plugin';
import type { Caller } from '../../core/roles';
import type { Metric } from '../../core/contracts/insights';
import type { Deps } from './deps';
import { department } from './schemas';

const windowQuery = z.object({ window_seconds: z.coerce.number().int().min(60).max(90 * 86400).default(86_400) });
const processFigures = z.object({ processes: z.number().int(), runs: z.number().int(), finished: z.number().int(), succeeded: z.number().int(), sla_met: z.number().int(), sla_met_rate: z.number().nullable(), mean_duration_ms: z.number().nullable() });
const kernelFigures = z.object({ kernel: z.string(), tasks: z.number(), error_rate: z.number().nullable(), latency_p95_ms: z.number().nullable(), queue_wait_p95_ms: z.number().nullable(), active_nodes: z.number().int(), threads: z.number().int(), slo_burn_rate: z.number().nullable(), slo: z.object({ availability: z.number(), latency_p99_ms: z.number() }) });

async function processStats(s: Deps, caller: Caller, since: string, dept?: string) {
  const pq = s.db('enterprise_processes').where('tenant_id', caller.tenantId);
  if (dept) pq.andWhere('department', dept);
  const procs = (await pq.select('id', 'workflow_id')) as Array<{ id: string; workflow_id: string }>;
  const runs = procs.length ? ((await s.db('enterprise_process_runs').where('tenant_id', caller.tenantId).whereIn('process_id', procs.map((p) => p.id)).andWhere('created_at', '>=', since).select('state', 'sla_met', 'duration_ms')) as Array<{ state: string; sla_met: unknown; duration_ms: number | null }>) : [];
  const finished = runs.filter((r) => ['succeeded', 'failed', 'cancelled'].includes(r.state));
  const met = finished.filter((r) => !!r.sla_met).length;
  const durations = finished.map((r) => r.duration_ms).filter((d): d is number => d !== null);
  return {
    procs,
    figures: { processes: procs.length, runs: runs.length, finished: finished.length, succeeded: finished.filter((r) => r.state === 'succeeded').length, sla_met: met, sla_met_rate: finished.length ? met / finished.length : null, mean_duration_ms: durations.length ? durations.reduce((a, b) => a + b, 0) / durations.length : null },
  };
}

export const kpiRoutes = (route: RouteMaker<Deps>) => [
  route({
    method: 'get',
    path: '/kpi/summary',
    summary: "The tenant's KPIs over a window: tasks, workflows, incidents, cost, manual actions, processes and SLAs, and every kernel's figures",
    access: 'viewer',
    feature: 'enterprise',
    query: windowQuery,
    response: z.object({ method: z.string(), window: z.object({ since: z.string(), until: z.string(), seconds: z.number() }), tenant: z.record(z.string(), z.number().nullable()), processes: processFigures, departments: z.array(z.string()), kernels: z.array(kernelFigures) }),
    errors: [422],
    handler: async ({ query, caller, services }) => {
      const snap = await services.kpis.snapshot(caller!.tenantId, query.window_seconds);
      const { figures } = await processStats(services, caller!, snap.window.since);
      const depts = (await services.db('enterprise_processes').where('tenant_id', caller!.tenantId).distinct('department').orderBy('department')) as Array<{ department: string }>;
      return { method: 'measured over the window from task outcomes, workflow executions, incidents, telemetry costs, the action log and process runs', window: snap.window, tenant: snap.tenant, processes: figures, departments: depts.map((d) => d.department), kernels: snap.kernels };
    },
  }),
  route({
    method: 'get',
    path: '/kpi/by_department/{department}',
    summary: "A department's KPIs: its processes (runs, SLA), their workflows (runs, failure rate) and the kernels those workflows use",
    access: 'viewer',
    feature: 'enterprise',
    params: z.object({ department }),
    query: windowQuery,
    response: z.object({ department: z.string(), method: z.string(), window: z.object({ since: z.string(), until: z.string(), seconds: z.number() }), processes: processFigures, workflows: z.array(z.object({ workflow_id: z.string(), runs: z.number().nullable(), failure_rate: z.number().nullable(), duration_p95_ms: z.number().nullable() })), kernels: z.array(kernelFigures) }),
    errors: [404, 422],
    handler: async ({ params, query, caller, services }) => {
      const snap = await services.kpis.snapshot(caller!.tenantId, query.window_seconds);
      const { procs, figures } = await processStats(services, caller!, snap.window.since, params.department);
      if (!procs.length) throw new NotFound(`Department ${params.department} owns no process`);
      const workflowIds = [...new Set(procs.map((p) => p.workflow_id))];
      const workflows = [];
      const kernels = new Set<string>();
      for (const id of workflowIds) {
        const m = (metric: Metric) => services.kpis.measure(caller!.tenantId, metric, { workflow_id: id, window_seconds: query.window_seconds }).then((x) => x.value);
        workflows.push({ workflow_id: id, runs: await m('workflow_runs'), failure_rate: await m('workflow_failure_rate'), duration_p95_ms: await m('workflow_duration_p95_ms') });
        const def = await services.workflows.definition(caller!, id).catch(() => null);
        for (const s of def?.steps ?? []) kernels.add(s.kernel);
      }
      return { department: params.department, method: 'the department owns its processes, their workflows and the kernels their steps run on; figures measured over the window', window: snap.window, processes: figures, workflows, kernels: snap.kernels.filter((k) => kernels.has(k.kernel)) };
    },
  }),
];
