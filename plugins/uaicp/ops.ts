import { z } from 'zod';
import { outcomeCounts, outcomePercentiles } from '../../core/mesh/outcomes';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import type { Deps } from './deps';
import { jobOut } from './inventory-routes';
import { placementFor } from './policies';
import { routeWorkload } from './routing';
import { checkRefs, runSteps, type Step } from './steps';

/** A kernel's figures now: active nodes and threads, in-flight, busy share and p95 of the last `windowMs`. */
async function snapshot(services: Deps, windowMs: number) {
  await services.mesh.outcomesWriter.flush();
  const since = new Date(services.clock.now().getTime() - windowMs).toISOString();
  const out = [];
  for (const k of services.mesh.kernels()) {
    const active = k.nodes.filter((n) => n.state === 'active');
    const threads = active.reduce((a, n) => a + n.threads, 0);
    const busy = (await services.db('task_outcomes').where('kernel_id', k.id).andWhere('at', '>=', since).sum({ s: 'duration_ms' }).first()) as { s: unknown } | undefined;
    const { tasks } = await outcomeCounts(services.db, { kernelId: k.id, since });
    const p95 = (await outcomePercentiles(services.db, { kernelId: k.id, since }, 'duration_ms', [95], tasks))?.[0] ?? null;
    out.push({ kernel: k.id, nodes: active.length, threads, in_flight: k.nodes.reduce((a, n) => a + n.in_flight, 0), tasks, utilisation: threads ? Math.round((Number(busy?.s ?? 0) / (threads * windowMs)) * 10_000) / 10_000 : null, p95_ms: p95 === null ? null : Math.round(p95 * 1000) / 1000, slo_p95_ms: k.slo.latency_p95_ms });
  }
  return out;
}

export function opsRoutes(route: RouteMaker<Deps>): RouteDef<Deps>[] {
  return [
    route({
      method: 'post',
      path: '/workflows/execute',
      summary: 'Run an existing workflow definition with each step placed by the workload router (202; poll GET /uaicp/jobs/{job_id})',
      description: "Each step is routed as a workload of type workflow_step on its kernel (409 NO_CANDIDATE when a step has no place), then run there in order. A step input may reference an earlier step's output as the workflows plugin does (${steps.<id>.output[.<path>]}); references are checked before anything runs: a malformed one, one naming an unknown, the same or a later step, or a path the referenced task's output schema cannot hold is 422 BAD_REFERENCE with the step's place (loc workflow.steps.<i>.input...). Each step's result shows its resolved input.",
      access: 'member',
      feature: 'aiops',
      body: z.object({ workflow_id: z.uuid(), requirements: z.object({ gpu_memory: z.number().min(0).max(100_000).optional(), latency_target_ms: z.number().positive().max(3_600_000).optional() }).default({}) }),
      response: jobOut,
      status: 202,
      errors: [404, 409, 422],
      handler: async ({ body, caller, services }) => {
        const def = await services.workflows.definition(caller!, body.workflow_id);
        const steps = def.steps as Step[];
        checkRefs(services.mesh, steps);
        const placements: Array<Awaited<ReturnType<typeof routeWorkload>>> = [];
        for (const s of steps) placements.push(await routeWorkload(services, caller!, { workload_type: 'workflow_step', kernel: s.kernel, requirements: body.requirements }));
        const job = await services.jobs.start(caller!.tenantId, caller!.id, 'workflow', { workflow_id: def.id, workflow_name: def.name, requirements: body.requirements }, (signal) => runSteps(services, caller!, steps, placements, signal));
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'execute_workflow', target_type: 'workflow', target_id: def.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: { job_id: job.id, steps: steps.length } });
        return job;
      },
    }),
    route({
      method: 'post',
      path: '/optimize/global',
      summary: 'Recompute placements and apply what the policies allow (202): kernels over their p95 SLO or utilisation get nodes; surplus is reported, not removed',
      description: 'apply=false only reports. Adding nodes needs the local provider allowed by every placement policy without a workload type. Poll GET /uaicp/jobs/{job_id}: before, changes, after.',
      access: 'operator',
      feature: 'aiops',
      body: z.object({ apply: z.boolean().default(true), max_new_nodes: z.number().int().min(0).max(8).default(2), window_seconds: z.number().int().min(10).max(86_400).default(300) }).default({ apply: true, max_new_nodes: 2, window_seconds: 300 }),
      response: jobOut,
      status: 202,
      errors: [422],
      handler: async ({ body, caller, services }) => {
        const job = await services.jobs.start(caller!.tenantId, caller!.id, 'optimize', body, async () => {
          const windowMs = body.window_seconds * 1000;
          const before = await snapshot(services, windowMs);
          const general = (await placementFor(services.db, caller!.tenantId, '')).filter((p) => p.rules.allowed_providers && !p.rules.allowed_providers.includes('local'));
          const { utilisationHigh, utilisationLow } = services.config.ako;
          const changes = [];
          let budget = body.max_new_nodes;
          for (const k of before) {
            const slow = k.p95_ms !== null && k.p95_ms > k.slo_p95_ms;
            const busy = k.utilisation !== null && k.utilisation >= utilisationHigh;
            if (slow || busy) {
              const why = slow ? `p95 ${k.p95_ms} ms above the SLO's ${k.slo_p95_ms} ms` : `utilisation ${k.utilisation} at or above ${utilisationHigh}`;
              if (!body.apply || general.length || budget <= 0) {
                changes.push({ kernel: k.kernel, action: 'add_node', applied: false, reason: why, detail: !body.apply ? 'apply=false' : general.length ? `policy ${general[0]!.name} does not allow the local provider` : 'max_new_nodes reached' });
                continue;
              }
              try {
                const n = await services.mesh.addNode(k.kernel, { source: 'automated', actor: 'uaicp.optimize', cause: why });
                budget--;
                changes.push({ kernel: k.kernel, action: 'add_node', applied: true, reason: why, detail: n.id });
              } catch (err) {
                changes.push({ kernel: k.kernel, action: 'add_node', applied: false, reason: why, detail: (err as Error).message });
              }
            } else if (k.nodes > 1 && k.utilisation !== null && k.utilisation <= utilisationLow && k.in_flight === 0) {
              changes.push({ kernel: k.kernel, action: 'remove_node', applied: false, reason: `utilisation ${k.utilisation} at or below ${utilisationLow} on ${k.nodes} nodes`, detail: 'surplus is reported; an operator drains nodes' });
            }
          }
          const after = await snapshot(services, windowMs);
          return { before, changes, after, method: `per kernel over the last ${body.window_seconds} s: busy share of active threads and nearest-rank p95 of task outcomes against ako.utilisationHigh/Low and the kernel's p95 SLO`, inputs: ['mesh nodes', 'task outcomes', 'placement policies'] };
        });
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'optimize_global', target_type: 'uaicp_job', target_id: job.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: body });
        return job;
      },
    }),
  ];
}
