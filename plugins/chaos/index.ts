// Chaos engineering (spec 4.5, /ops/resilience) and the production validation (4.19): the
// engine (./engine) runs experiments on the live mesh through its fault interface
// (Mesh.faults); other plugins see running experiments through ChaosRuns.
import { z } from 'zod';
import { domainName, EXPERIMENT_STATUSES, experiment, INJECTION_TYPES, report, scenario, scenarioBody } from './engine/schemas';
import { chaosRunsRef } from '../../core/contracts/chaos';
import { definePlugin, provide } from '../../core/plugin';
import { ChaosService, chaosEngineRef as engineRef } from './engine/service';
import { chaosMigrations } from './engine/store';
import { core } from '../../core/services';
import type { Caller } from '../../core/roles';

const who = (c: Caller | null) => ({ id: c!.id, tenantId: c!.tenantId });
const scenarioParams = z.object({ scenario_id: z.uuid() });
const experimentParams = z.object({ experiment_id: z.uuid() });
const page = { limit: z.coerce.number().int().min(1).max(500).default(100), cursor: z.string().max(300).optional() };

export default definePlugin({
  id: 'chaos',
  prefix: '',
  deps: { chaos: engineRef, mesh: core.mesh, config: core.config },
  provides: [
    provide(engineRef, {
      deps: { config: core.config, db: core.db, mesh: core.mesh, events: core.events, actions: core.actions, log: core.log },
      factory: (d) => new ChaosService(d.config.chaos, d.db, d.mesh, d.events, d.actions, d.log),
      start: (c) => c.start(),
      // Plugins stop before the mesh: experiments roll back while their nodes still run.
      stop: (c) => c.stop(),
    }),
    provide(chaosRunsRef, { deps: { engine: engineRef }, factory: ({ engine }) => engine }),
  ],
  migrations: chaosMigrations,
  routes: (route) => [
    route({
      method: 'get',
      path: '/ops/resilience/scenarios',
      summary: 'Chaos scenarios: the built-ins and the tenant\'s own',
      access: 'viewer',
      query: z.object({ ...page, injection_type: z.enum(INJECTION_TYPES).optional(), domain: domainName.optional() }),
      response: z.object({ scenarios: z.array(scenario), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: ({ query, caller, services }) => services.chaos.listScenarios(caller!.tenantId, query),
    }),
    route({
      method: 'post',
      path: '/ops/resilience/scenarios',
      summary: 'Create a scenario (beyond the spec); 422 for an unknown injection type, bad parameters or an unknown domain',
      access: 'operator',
      body: scenarioBody,
      status: 201,
      response: scenario,
      errors: [422],
      handler: ({ body, caller, services }) => services.chaos.createScenario(body, who(caller)),
    }),
    route({
      method: 'get',
      path: '/ops/resilience/scenarios/{scenario_id}',
      summary: 'One scenario',
      access: 'viewer',
      params: scenarioParams,
      response: scenario,
      errors: [404],
      handler: ({ params, caller, services }) => services.chaos.getScenario(caller!.tenantId, params.scenario_id),
    }),
    route({
      method: 'post',
      path: '/ops/resilience/scenarios/{scenario_id}/run',
      summary: 'Run a scenario: steady state before, injection for the duration, rollback, steady state after (202; poll the experiment)',
      description: '409 when a target domain is under a running experiment, or a target kernel has no node the fault can act on; 404 for an unknown scenario or a target kernel that is not in the mesh.',
      access: 'operator',
      params: scenarioParams,
      status: 202,
      response: experiment,
      errors: [404, 409],
      handler: ({ params, caller, services }) => services.chaos.runScenario(params.scenario_id, who(caller)),
    }),
    route({
      method: 'get',
      path: '/ops/resilience/experiments',
      summary: 'Experiment history (the journal), newest first',
      access: 'viewer',
      query: z.object({ ...page, status: z.enum(EXPERIMENT_STATUSES).optional(), scenario_id: z.uuid().optional(), domain: domainName.optional() }),
      response: z.object({ experiments: z.array(experiment), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: ({ query, caller, services }) => services.chaos.listExperiments(caller!.tenantId, query),
    }),
    route({
      method: 'get',
      path: '/ops/resilience/experiments/{experiment_id}',
      summary: 'One experiment (beyond the spec: poll a run)',
      access: 'viewer',
      params: experimentParams,
      response: experiment,
      errors: [404],
      handler: ({ params, caller, services }) => services.chaos.get(caller!.tenantId, params.experiment_id),
    }),
    route({
      method: 'post',
      path: '/ops/resilience/experiments/{experiment_id}/abort',
      summary: 'Abort a running experiment: every injection is removed at once (409 unless running)',
      description: 'An experiment another host of the cluster runs is aborted by that host (504 OWNER_TIMEOUT when it does not answer).',
      access: 'operator',
      params: experimentParams,
      response: experiment,
      errors: [404, 409, 504],
      handler: ({ params, caller, services }) => services.chaos.abort(params.experiment_id, who(caller)),
    }),
    route({
      method: 'post',
      path: '/ops/resilience/halt',
      summary: 'Emergency stop (beyond the spec): aborts every running experiment of every tenant, on every host of the cluster',
      description: 'In a cluster each live host halts its own experiments; 504 OWNER_TIMEOUT when one does not answer (the others have halted theirs).',
      errors: [504],
      access: 'operator',
      response: z.object({ halted: z.array(z.string()), halted_total: z.number().int(), injections_removed: z.number().int() }),
      handler: ({ caller, services }) => services.chaos.halt(who(caller)),
    }),
    route({
      method: 'get',
      path: '/ops/resilience/report',
      summary: 'Resilience report per domain and overall: experiments run, passed, deviated, mean time to recover, resilience score',
      access: 'viewer',
      query: z.object({ since: z.iso.datetime({ offset: true }).optional() }),
      response: report,
      errors: [422],
      handler: ({ query, caller, services }) => services.chaos.report(caller!.tenantId, query.since ? new Date(query.since).toISOString() : undefined),
    }),
    route({
      method: 'post',
      path: '/chaos/validate_production',
      summary: 'Safe validation: a short latency experiment on one node per domain, one domain at a time; answers the verdict with the experiments',
      description: 'Body (all optional): domains (default every kernel), latency_ms (default chaos.validation.latencyMs). 404 for an unknown domain, 409 when one is under a running experiment.',
      access: 'operator',
      body: z.strictObject({ domains: z.array(domainName).min(1).max(64).optional(), latency_ms: z.number().int().min(1).max(10_000).optional() }).optional(),
      response: z.object({
        verdict: z.enum(['passed', 'failed', 'inconclusive']),
        ready: z.boolean(),
        started_at: z.string(),
        ended_at: z.string(),
        duration_ms: z.number(),
        domains: z.array(z.object({ domain: z.string(), experiment_id: z.string().nullable(), outcome: z.string(), reason: z.string().nullable() })),
        experiments: z.array(experiment),
      }),
      errors: [404, 409, 422],
      handler: ({ body, caller, services }) => {
        const domains = body?.domains ? [...new Set(body.domains)] : services.mesh.kernelIds();
        return services.chaos.validate(domains, body?.latency_ms ?? services.config.chaos.validation.latencyMs, who(caller));
      },
    }),
  ],
});
