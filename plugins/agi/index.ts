// AGI group (spec 4.15): insight chains, agents, the cognitive (planning) loop, approvals,
// governance policy validation and what-if simulations. It provides the shared services
// (core/contracts/insights.ts, governance.ts, planning.ts) that autonomous, copilot and
// enterprise use. Decisions and examples: docs/groups/autonomous.md.
import { definePlugin, provide } from '../../core/plugin';
import { core } from '../../core/services';
import { approvalsRef, governanceRef } from '../../core/contracts/governance';
import { insightsRef, kpisRef } from '../../core/contracts/insights';
import { planningRef } from '../../core/contracts/planning';
import { deps, simRef } from './deps';
import { GovernanceService } from './governance';
import { Insights } from './insights';
import { Kpis } from './kpis';
import { LOOP_AGENT, PlanningService } from './loop';
import { agiMigrations } from './migrations';
import { chainRoutes } from './routes-chains';
import { loopRoutes } from './routes-loop';
import { simRoutes } from './routes-sim';
import { Simulations } from './sim';


export default definePlugin({
  id: 'agi',
  prefix: '/agi',
  deps,
  provides: [
    provide(kpisRef, {
      deps: { db: core.db, mesh: core.mesh, config: core.config, clock: core.clock },
      factory: ({ db, mesh, config, clock }) => new Kpis(db, mesh, config, clock),
    }),
    provide(insightsRef, {
      deps: { db: core.db, events: core.events, kpis: kpisRef, clock: core.clock },
      factory: ({ db, events, kpis, clock }) => new Insights(db, events, kpis, clock),
      // The platform's own agents, so that their chains and actions have an owner to list.
      start: async (svc) => {
        await svc.registerAgent({ id: LOOP_AGENT, tenant_id: null, name: 'Cognitive loop', kind: 'cognitive_loop', description: 'Observes KPIs, sets objectives, proposes mesh actions through governance (each waits for a human unless governance.autoApprove lists it)', role: 'operator', permissions: ['add_node', 'drain_node'], state: 'active' });
        await svc.registerAgent({ id: 'ako', tenant_id: null, name: 'Autonomous kernel optimisation', kind: 'ako', description: 'Proposes and applies node and thread changes from measured utilisation, queue wait and error rate (/ako); its actions are recorded as actor "ako"', role: 'operator', permissions: ['add_node', 'remove_node', 'drain_node', 'set_threads'], state: 'active' });
      },
    }),
    provide(governanceRef, {
      deps: { db: core.db, mesh: core.mesh, config: core.config, events: core.events, actions: core.actions, insights: insightsRef, clock: core.clock },
      factory: ({ db, mesh, config, events, actions, insights, clock }) => new GovernanceService(db, mesh, config, events, actions, insights, clock),
    }),
    // The approval store is where governance files waiting actions: one object, two refs.
    provide(approvalsRef, {
      deps: { governance: governanceRef },
      factory: ({ governance }) => governance as GovernanceService,
    }),
    provide(planningRef, {
      deps: { db: core.db, mesh: core.mesh, config: core.config, events: core.events, log: core.log, kpis: kpisRef, insights: insightsRef, governance: governanceRef, actions: core.actions, clock: core.clock, leases: core.leases },
      factory: (d) => new PlanningService(d.db, d.mesh, d.config, d.events, d.log, d.kpis, d.insights, d.governance, d.actions, d.clock, d.leases),
      start: (svc) => (svc as PlanningService).resume(),
      stop: (svc) => (svc as PlanningService).shutdown(),
    }),
    provide(simRef, {
      deps: { db: core.db, mesh: core.mesh, config: core.config, events: core.events, actions: core.actions, clock: core.clock },
      factory: (d) => new Simulations(d.db, d.mesh, d.config, d.events, d.actions, d.clock),
      stop: (svc) => svc.stop(),
    }),
  ],
  migrations: agiMigrations,
  routes: (route) => [...chainRoutes(route), ...loopRoutes(route), ...simRoutes(route)],
});
