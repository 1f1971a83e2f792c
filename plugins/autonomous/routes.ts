import { z } from 'zod';
import type { RouteMaker } from '../../core/plugin';
import type { Deps } from './deps';
import { agentBlueprintSchema, opportunitySchema, page, promotedSchema, scanSchema, skillSchema, variantSchema } from './schemas';

const variantParams = z.object({ variant_id: z.uuid() });

export const autonomyRoutes = (route: RouteMaker<Deps>) => [
  route({
    method: 'post',
    path: '/opportunities/scan',
    summary: "Scan the tenant's history for automation opportunities (202; poll GET /autonomous/opportunities/scans/{scan_id})",
    description: 'Repeated manual action sequences (action log), workflows that fail often, kernel tasks that workflow steps retry often.',
    access: 'member',
    body: z.object({ window_seconds: z.number().int().min(60).max(90 * 86400).default(7 * 86400) }).strict().default({ window_seconds: 7 * 86400 }),
    response: scanSchema,
    status: 202,
    errors: [422],
    handler: ({ body, caller, services }) => services.autonomy.startScan(caller!, body.window_seconds),
  }),
  route({
    method: 'get',
    path: '/opportunities/scans/{scan_id}',
    summary: 'One opportunity scan: queued → running → succeeded | failed, with the number found (beyond the spec: the 202 of the scan)',
    access: 'viewer',
    params: z.object({ scan_id: z.uuid() }),
    response: scanSchema,
    errors: [404, 422],
    handler: ({ params, caller, services }) => services.autonomy.scanOf(caller!, params.scan_id),
  }),
  route({
    method: 'get',
    path: '/opportunities',
    summary: 'Automation opportunities found by scans, with their evidence and estimated saving',
    access: 'viewer',
    query: z.object({ kind: z.enum(['manual_sequence', 'failing_workflow', 'retried_task']).optional(), ...page }),
    response: z.object({ opportunities: z.array(opportunitySchema), next_cursor: z.string().nullable() }),
    errors: [422],
    handler: ({ query, caller, services }) => services.autonomy.opportunities(caller!, query),
  }),
  route({
    method: 'post',
    path: '/skills/generate',
    summary: 'Turn an opportunity into a skill blueprint: a workflow definition (created) or a sequence of governed actions with its inputs',
    access: 'member',
    body: z.object({ opportunity_id: z.uuid(), name: z.string().trim().min(1).max(200).optional() }).strict(),
    response: skillSchema,
    status: 201,
    errors: [404, 409, 422],
    handler: ({ body, caller, services }) => services.autonomy.generateSkill(caller!, body.opportunity_id, body.name),
  }),
  route({
    method: 'get',
    path: '/skills/blueprints',
    summary: "The tenant's skill blueprints, newest first",
    access: 'viewer',
    query: z.object(page),
    response: z.object({ blueprints: z.array(skillSchema), next_cursor: z.string().nullable() }),
    errors: [422],
    handler: ({ query, caller, services }) => services.autonomy.skills(caller!, query),
  }),
  route({
    method: 'post',
    path: '/agents/generate',
    summary: 'Make an agent blueprint from a skill: schedule, inputs and the limited role it will run with (not above the caller\'s)',
    access: 'member',
    body: z
      .object({
        blueprint_id: z.uuid(),
        name: z.string().trim().min(1).max(200).optional(),
        schedule_seconds: z.number().int().min(1).max(86_400).default(3600),
        role: z.enum(['viewer', 'member', 'operator']).default('member'),
        inputs: z.record(z.string().max(64), z.string().min(1).max(128)).default({}),
      })
      .strict(),
    response: agentBlueprintSchema,
    status: 201,
    errors: [403, 404, 422],
    handler: ({ body, caller, services }) => services.autonomy.generateAgent(caller!, body),
  }),
  route({
    method: 'post',
    path: '/agents/{blueprint_id}/deploy',
    summary: 'Deploy an agent (or start a stopped one again): it runs its skill every schedule_seconds under its own service identity (agent:<id>)',
    access: 'member',
    params: z.object({ blueprint_id: z.uuid() }),
    response: agentBlueprintSchema,
    errors: [403, 404, 409, 422],
    handler: ({ params, caller, services }) => services.autonomy.deploy(caller!, params.blueprint_id),
  }),
  route({
    method: 'post',
    path: '/agents/{blueprint_id}/stop',
    summary: 'Stop a deployed agent (beyond the spec): no more scheduled runs; deploy starts it again',
    access: 'member',
    params: z.object({ blueprint_id: z.uuid() }),
    response: agentBlueprintSchema,
    errors: [404, 409, 422],
    handler: ({ params, caller, services }) => services.autonomy.stopAgent(caller!, params.blueprint_id),
  }),
  route({
    method: 'post',
    path: '/workflows/{workflow_id}/evolve',
    summary: "Create a variant of a workflow: the changes given, or (none given) more attempts for steps that failed and more time for steps that timed out",
    access: 'member',
    params: z.object({ workflow_id: z.uuid() }),
    body: z
      .object({
        changes: z
          .object({
            retries: z.number().int().min(0).max(5).optional(),
            timeout_ms: z.number().int().min(100).max(3_600_000).optional(),
            steps: z.array(z.object({ id: z.string().min(1).max(64), kernel: z.string().max(64).optional(), task: z.string().max(64).optional(), input: z.unknown().optional(), retries: z.number().int().min(0).max(5).optional(), timeout_ms: z.number().int().min(100).max(3_600_000).optional() }).strict()).max(100).optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .default({}),
    response: variantSchema,
    status: 201,
    errors: [404, 422],
    handler: ({ params, body, caller, services }) => services.variants.evolve(caller!, params.workflow_id, body.changes),
  }),
  route({
    method: 'get',
    path: '/workflows/variants/{variant_id}',
    summary: 'One variant with its canary progress and results (beyond the spec: the 202 of the canary)',
    access: 'viewer',
    params: variantParams,
    response: variantSchema,
    errors: [404, 422],
    handler: ({ params, caller, services }) => services.variants.view(caller!, params.variant_id),
  }),
  route({
    method: 'post',
    path: '/workflows/variants/{variant_id}/canary',
    summary: "Canary a variant (202): of the workflow's next `runs` runs, `share` run the variant's steps; both arms measured and tested",
    description: 'mode `live` (default): the runs are the workflow\'s real runs, whoever starts them (POST /workflows/{id}/run, schedules, agents); the canary waits for them. mode `synthetic`: the canary starts the runs itself, as the variant\'s creator. One canary per workflow at a time (409 CANARY_RUNNING).',
    access: 'member',
    params: variantParams,
    body: z
      .object({ share: z.number().min(0.05).max(0.95).default(0.5), runs: z.number().int().min(4).max(200).default(20), alpha: z.number().gt(0).max(0.2).default(0.05), mode: z.enum(['live', 'synthetic']).default('live') })
      .strict()
      .default({ share: 0.5, runs: 20, alpha: 0.05, mode: 'live' }),
    response: variantSchema,
    status: 202,
    errors: [404, 409, 422],
    handler: ({ params, body, caller, services }) => services.variants.canary(caller!, params.variant_id, body),
  }),
  route({
    method: 'post',
    path: '/workflows/variants/{variant_id}/promote',
    summary: "Make an evaluated variant the workflow's definition (a governed action); 409 VARIANT_WORSE when the canary found it worse",
    access: 'member',
    params: variantParams,
    response: promotedSchema,
    errors: [404, 409, 422],
    handler: ({ params, caller, services }) => services.variants.promote(caller!, params.variant_id),
  }),
  route({
    method: 'post',
    path: '/workflows/variants/{variant_id}/rollback',
    summary: 'End a canary (or undo a promotion: the definition gets its previous steps back)',
    access: 'member',
    params: variantParams,
    response: variantSchema,
    errors: [404, 409, 422],
    handler: ({ params, caller, services }) => services.variants.rollback(caller!, params.variant_id),
  }),
];
