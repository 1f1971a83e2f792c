import { z } from 'zod';
import type { RouteDef, RouteMaker } from '../../../core/plugin';
import type { Deps } from '../deps';
import { upgradeView } from '../upgrade/service';
import { jsonObject } from '../schemas';

const upgrade = z.object({
  id: z.string(),
  kind: z.enum(['validation', 'plan', 'execution']),
  state: z.string(),
  candidate: z.string().nullable(),
  report: jsonObject,
  reason: z.string().nullable(),
  created_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const upgradeRoutes = (route: RouteMaker<Deps>): RouteDef<Deps>[] => [
  route({
    method: 'post',
    path: '/upgrade/validate',
    summary: 'Validate an upgrade to a candidate build (202): pending migrations per plugin, kernel and config changes, a dry run on a copy of the database',
    description: 'candidate: a folder of automation.upgrade.candidatesDir (503 NOT_CONFIGURED when unset); omitted: the running build (what the database still lacks of it).',
    access: 'admin',
    body: z.object({ candidate: z.string().min(1).max(128).optional() }),
    response: upgrade,
    status: 202,
    errors: [422, 503],
    handler: async ({ body, caller, services }) => upgradeView(await services.automation.upgrades.validate(caller!, body.candidate ?? null)),
  }),
  route({
    method: 'get',
    path: '/upgrade/validation/{validation_id}',
    summary: 'A validation: its state and report',
    access: 'admin',
    params: z.object({ validation_id: z.uuid() }),
    response: upgrade,
    errors: [404, 422],
    handler: async ({ params, services }) => upgradeView(await services.automation.upgrades.get(params.validation_id, 'validation')),
  }),
  route({
    method: 'post',
    path: '/upgrade/plan',
    summary: 'Ordered steps of an upgrade from a succeeded validation, with the expected downtime (none for rolling kernel restarts)',
    access: 'admin',
    body: z.object({ validation_id: z.uuid() }),
    response: upgrade,
    status: 201,
    errors: [404, 409, 422],
    handler: async ({ body, caller, services }) => upgradeView(await services.automation.upgrades.plan(caller!, body.validation_id)),
  }),
  route({
    method: 'post',
    path: '/upgrade/execute',
    summary: 'Execute a plan (202): backup, migrations, rolling kernel restart, verification; the backup is restored when a step fails',
    description: 'Poll GET /upgrade/executions/{execution_id}.',
    access: 'admin',
    body: z.object({ plan_id: z.uuid() }),
    response: upgrade,
    status: 202,
    errors: [404, 409, 422],
    handler: async ({ body, caller, services }) => upgradeView(await services.automation.upgrades.execute(caller!, body.plan_id)),
  }),
  route({
    method: 'get',
    path: '/upgrade/executions/{execution_id}',
    summary: 'An upgrade execution: its state and the outcome of each step',
    access: 'admin',
    params: z.object({ execution_id: z.uuid() }),
    response: upgrade,
    errors: [404, 422],
    handler: async ({ params, services }) => upgradeView(await services.automation.upgrades.get(params.execution_id, 'execution')),
  }),
];
