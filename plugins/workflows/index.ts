import { z } from 'zod';
import { bodyOrThrow } from '../../core/cluster/bus';
import { nowIso, type Db } from '../../core/db';
import type { Mesh } from '../../core/mesh/mesh';
import { Conflict } from '../../core/errors';
import { pageOf } from '../../core/pagination';
import { createServiceRef, definePlugin, provide, type ServiceRef } from '../../core/plugin';
import { workflowsRef } from '../../core/contracts/workflows';
import { WorkflowService } from './service';
import { core } from '../../core/services';
import { tenantScope } from '../../core/tenancy';
import { Runner } from './runner';
import { definition, definitionBody, execution, page } from './schemas';
import { EXEC_STATES, FINISHED, toDefinition, toExecution, workflowMigrations, type Execution } from './store';

/** The workflow runner: one a host, made and stopped by the host. */
const runnerRef = createServiceRef<Runner>('workflows.runner');
/** The same service as workflowsRef, typed with the method the run route uses. */
const serviceRef = workflowsRef as unknown as ServiceRef<WorkflowService>;


const workflowParams = z.object({ workflow_id: z.uuid() });
const execParams = z.object({ execution_id: z.uuid() });

export default definePlugin({
  id: 'workflows',
  prefix: '',
  deps: { db: core.db, events: core.events, mesh: core.mesh, log: core.log, runner: runnerRef, workflows: serviceRef },
  provides: [
    // Definitions and runs for other plugins (core/contracts/workflows.ts).
    provide(workflowsRef, {
      deps: { db: core.db, events: core.events, mesh: core.mesh, runner: runnerRef },
      factory: (d) => new WorkflowService(d.db, d.events, d.mesh, d.runner),
    }),
    provide(runnerRef, {
      deps: { db: core.db, events: core.events, mesh: core.mesh, log: core.log },
      factory: (d) => new Runner(d),
      start: async (runner) => {
        const n = await runner.recover();
        if (n) runner.log.warn({ executions: n }, 'workflow executions left running by a stopped host were marked failed');
        runner.joinCluster();
      },
      stop: (runner) => runner.stop(),
    }),
  ],
  migrations: workflowMigrations,
  routes: (route) => [
    route({
      method: 'post',
      path: '/workflows',
      summary: 'Create a workflow definition (also served as POST /api/workflows)',
      description: 'Kernels, tasks, inputs and references are checked; 422 names the bad step. An empty step list is valid.',
      access: 'member',
      body: definitionBody,
      response: definition,
      status: 201,
      errors: [422],
      handler: async ({ body, caller, services }) => {
        return services.workflows.create(caller!, body.name, body.steps);
      },
    }),
    route({
      method: 'get',
      path: '/ops/workflows/definitions',
      summary: "The tenant's workflow definitions, newest first",
      access: 'viewer',
      query: z.object(page),
      response: z.object({ definitions: z.array(definition), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const { items, next_cursor } = await pageOf(tenantScope(services.db, caller!).select('workflow_definitions'), query.limit, query.cursor);
        return { definitions: items.map(toDefinition), next_cursor };
      },
    }),
    route({
      method: 'post',
      path: '/workflows/{workflow_id}/run',
      summary: 'Start an execution of a definition (beyond the spec); its steps run on the kernels',
      access: 'member',
      params: workflowParams,
      response: execution,
      status: 202,
      errors: [404],
      handler: async ({ params, caller, services }) => {
        const def = toDefinition(await tenantScope(services.db, caller!).get('workflow_definitions', { id: params.workflow_id }, 'Workflow definition'));
        return (await services.workflows.startRouted(caller!, def)).execution;
      },
    }),
    route({
      method: 'get',
      path: '/ops/workflows',
      summary: "The tenant's workflow executions, newest first; filter by status",
      access: 'viewer',
      query: z.object({ status: z.enum(EXEC_STATES).optional(), workflow_id: z.uuid().optional(), ...page }),
      response: z.object({ executions: z.array(execution), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const q = tenantScope(services.db, caller!).select('workflow_executions');
        if (query.status) q.where('state', query.status);
        if (query.workflow_id) q.where('workflow_id', query.workflow_id);
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        return { executions: items.map(toExecution), next_cursor };
      },
    }),
    route({
      method: 'get',
      path: '/ops/workflows/{execution_id}',
      summary: 'One execution: state, per-step timing, output or error',
      access: 'viewer',
      params: execParams,
      response: execution,
      errors: [404],
      handler: async ({ params, caller, services }) => toExecution(await tenantScope(services.db, caller!).get('workflow_executions', { id: params.execution_id }, 'Workflow execution')),
    }),
    route({
      method: 'post',
      path: '/ops/workflows/{execution_id}/cancel',
      summary: 'Cancel a pending or running execution: its running task is aborted on its worker, the rest skipped',
      description: 'In a cluster the host that runs the execution cancels it (504 OWNER_TIMEOUT when that host does not answer in time).',
      access: 'member',
      params: execParams,
      response: execution,
      errors: [404, 409, 504],
      handler: async ({ params, caller, services }) => {
        const scope = tenantScope(services.db, caller!);
        const get = async () => toExecution(await scope.get('workflow_executions', { id: params.execution_id }, 'Workflow execution'));
        const finished = (e: Execution) => new Conflict(`Execution ${e.id} is ${e.state}; only pending or running executions can be cancelled`);
        const e = await get();
        if (FINISHED.includes(e.state)) throw finished(e);
        const runner = services.runner;
        if (await runner.cancel(e.id)) return get();
        // Run by another live host of the cluster: that host aborts its running task.
        const host = await runHost(services.db, services.mesh, e.id);
        if (host && bodyOrThrow<{ cancelled: boolean }>(await services.mesh.bus!.request(host, e.id, 'workflow.cancel', {}, { what: `workflow execution ${e.id}` }), host).cancelled) return get();
        // Not run by a live host (its host stopped), or not started yet: mark it here.
        runner.finishSteps(e, 'cancelled', 'cancelled');
        const n = await services.db('workflow_executions')
          .where({ id: e.id, tenant_id: caller!.tenantId })
          .whereIn('state', ['pending', 'running'])
          .update({ state: 'cancelled', error: 'cancelled by request', steps: JSON.stringify(e.steps), finished_at: nowIso() });
        if (!n) throw finished(await get());
        const after = await get();
        services.events.publish('workflow_status', { execution_id: e.id, workflow_id: e.workflow_id, workflow_name: e.workflow_name, tenant_id: e.tenant_id, state: 'cancelled', previous: e.state, error: after.error, steps: after.steps.map((s) => ({ id: s.id, state: s.state })) });
        return after;
      },
    }),
  ],
});

/** The other live host of the cluster that runs an execution; null on a single host or when it runs here or nowhere live. */
async function runHost(db: Db, mesh: Mesh, id: string): Promise<string | null> {
  if (!mesh.bus) return null;
  const row = await db('workflow_executions').where({ id }).first('host');
  const host = (row?.host as string | null) ?? null;
  if (!host || host === mesh.hostId) return null;
  return mesh.hosts().some((h) => h.host_id === host && h.live) ? host : null;
}
