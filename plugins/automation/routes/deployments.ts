import { z } from 'zod';
import { pageOf } from '../../../core/pagination';
import type { RouteDef, RouteMaker } from '../../../core/plugin';
import type { Deps } from '../deps';
import { DEPLOY_STATES, deployView, type DeployRow } from '../deploy/service';
import { gated, listQuery } from '../schemas';

const gate = z.object({ ok: z.boolean(), probes: z.number().int(), failures: z.number().int(), health: z.string(), reason: z.string() });
const deployment = z.object({
  id: z.string(),
  tenant_id: z.string(),
  kernel_id: z.string(),
  state: z.enum(DEPLOY_STATES),
  allowed_actions: z.array(z.string()),
  target: z.object({ nodes: z.number().int(), threads_per_node: z.number().int(), settings: z.record(z.string(), z.unknown()).nullable().describe('The kernel settings rolled out (null: unchanged); values under keys naming a secret show as "(hidden)"') }),
  before: z.array(z.object({ id: z.string(), threads: z.number().int() })).nullable(),
  validation: z.record(z.string(), z.unknown()).nullable(),
  steps: z.array(z.object({ n: z.number().int(), action: z.enum(['add_node', 'remove_node']), node_id: z.string(), threads: z.number().int(), gate: gate.nullable(), at: z.string(), phase: z.enum(['rollout', 'rollback']).optional() })),
  reason: z.string().nullable(),
  created_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
const idParams = z.object({ deployment_id: z.uuid() });

export const deploymentRoutes = (route: RouteMaker<Deps>): RouteDef<Deps>[] => {
  /** POST /automation/deployments/{id}/<name>: one state-changing action of a deployment. */
  const action = (name: 'validate' | 'execute' | 'rollback', summary: string, status: number) =>
    route({
      ...gated,
      method: 'post',
      path: `/automation/deployments/{deployment_id}/${name}`,
      summary,
      access: 'operator',
      params: idParams,
      response: deployment,
      status,
      errors: [404, 409, 422],
      handler: async ({ params, caller, services }) => {
        const d = services.automation.deployments;
        return deployView(await d[name](caller!, await d.get(caller!.tenantId, params.deployment_id)), d.sealer);
      },
    });
  return [
  route({
    ...gated,
    method: 'post',
    path: '/automation/deployments',
    summary: "A draft deployment: a kernel's node count, threads per node or settings to roll out",
    description: 'Unset fields keep the current value. States: draft → validated | invalid → queued → running → succeeded, or rolling_back → rolled_back | failed (docs/groups/automation.md).',
    access: 'operator',
    body: z.object({
      kernel_id: z.string().min(1).max(64),
      nodes: z.number().int().min(0).max(64).optional(),
      threads_per_node: z.number().int().min(1).max(64).optional(),
      settings: z.record(z.string(), z.unknown()).optional().describe("New settings of the kernel, checked against the settings schema its manifest declares (422 otherwise); every node is replaced by one with them"),
    }),
    response: deployment,
    status: 201,
    errors: [422],
    handler: async ({ body, caller, services }) => deployView(await services.automation.deployments.create(caller!, body), services.automation.deployments.sealer),
  }),
  action('validate', 'Check the kernel answers on a worker, its tasks describe themselves, and capacity exists for the rollout', 200),
  action('execute', 'Roll out a validated deployment node by node behind the health gate (202; rolls back by itself when the gate fails)', 202),
  action('rollback', 'Return the kernel to its node shape before a succeeded or failed deployment (202)', 202),
  route({
    ...gated,
    method: 'get',
    path: '/automation/deployments/{deployment_id}',
    summary: 'One deployment with its state, steps and gate results',
    access: 'viewer',
    params: idParams,
    response: deployment,
    errors: [404, 422],
    handler: async ({ params, caller, services }) => deployView(await services.automation.deployments.get(caller!.tenantId, params.deployment_id), services.automation.deployments.sealer),
  }),
  route({
    ...gated,
    method: 'get',
    path: '/automation/deployments',
    summary: "The tenant's deployments, newest first",
    access: 'viewer',
    query: listQuery.extend({ state: z.enum(DEPLOY_STATES).optional(), kernel_id: z.string().max(64).optional() }),
    response: z.object({ deployments: z.array(deployment), next_cursor: z.string().nullable() }),
    errors: [422],
    handler: async ({ query, caller, services }) => {
      const q = services.db('automation_deployments').where({ tenant_id: caller!.tenantId });
      if (query.state) q.where({ state: query.state });
      if (query.kernel_id) q.where({ kernel_id: query.kernel_id });
      const page = await pageOf(q, query.limit, query.cursor);
      return { deployments: page.items.map((r) => deployView(r as DeployRow, services.automation.deployments.sealer)), next_cursor: page.next_cursor };
    },
  }),
];
};
