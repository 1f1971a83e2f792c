import { z } from 'zod';
import { jobViewFields } from '../../core/jobs';
import type { RouteMaker } from '../../core/plugin';
import type { Deps } from './deps';
import { SIM_STATES } from './sim';

const scenario = z.object({ id: z.string(), kind: z.enum(['load', 'node_loss', 'price']), name: z.string(), description: z.string(), kernel: z.string().nullable(), defaults: z.record(z.string(), z.number()) });
const result = z.object({
  id: z.string(),
  tenant_id: z.string(),
  scenario_id: z.string(),
  state: z.enum(SIM_STATES),
  seed: z.number().int(),
  inputs: z.unknown(),
  result: z.unknown(),
  ...jobViewFields,
});

export const simRoutes = (route: RouteMaker<Deps>) => [
  route({
    method: 'get',
    path: '/sim/scenarios',
    summary: 'What-if scenarios: load x N and node loss for every kernel, a price change on the tenant\'s cost',
    access: 'viewer',
    feature: 'agi',
    response: z.object({ scenarios: z.array(scenario), next_cursor: z.string().nullable() }),
    handler: ({ services }) => ({ scenarios: services.sim.scenarios(), next_cursor: null }),
  }),
  route({
    method: 'post',
    path: '/sim/scenarios/{scenario_id}/run',
    summary: 'Run a scenario on the analytics kernel (202): the model is fitted to measured data, the seed recorded; repeat_of reruns a result exactly',
    access: 'member',
    feature: 'agi',
    params: z.object({ scenario_id: z.string().min(1).max(128) }),
    body: z
      .object({
        seed: z.number().int().min(0).max(2 ** 31 - 1).optional(),
        factor: z.number().positive().max(100).optional(),
        nodes_lost: z.number().int().min(1).max(64).optional(),
        replications: z.number().int().min(1).max(2000).optional(),
        tasks: z.number().int().min(10).max(20_000).optional(),
        window_seconds: z.number().int().min(60).max(90 * 86400).optional(),
        horizon_days: z.number().int().min(1).max(3650).optional(),
        repeat_of: z.uuid().optional(),
      })
      .strict()
      .default({}),
    response: result,
    status: 202,
    errors: [404, 409, 422],
    handler: ({ params, body, caller, services }) => services.sim.run(caller!, params.scenario_id, body),
  }),
  route({
    method: 'get',
    path: '/sim/results/{result_id}',
    summary: 'A simulation run: queued → running → succeeded | failed; distributions and percentiles of baseline and scenario, with the seed',
    access: 'viewer',
    feature: 'agi',
    params: z.object({ result_id: z.uuid() }),
    response: result,
    errors: [404, 422],
    handler: ({ params, caller, services }) => services.sim.result(caller!, params.result_id),
  }),
];
