import { definePlugin, provide } from '../../core/plugin';
import { core } from '../../core/services';
import { deps, jobsRef } from './deps';
import { forecastRoutes } from './forecast';
import { inventoryRoutes } from './inventory-routes';
import { Jobs } from './jobs';
import { opsRoutes } from './ops';
import { allPolicyRoutes } from './policies';
import { routingRoutes } from './routing';
import { uaicpMigrations } from './store';
import { viewRoutes } from './views';

/** The universal AI control plane (/uaicp): inventory, placement, policies, forecasts, ROI. */
export default definePlugin({
  id: 'uaicp',
  prefix: '/uaicp',
  deps,
  provides: [
    provide(jobsRef, {
      deps: { db: core.db, events: core.events, log: core.log, clock: core.clock },
      factory: (d) => new Jobs(d),
      start: (j) => j.recover(),
      stop: (j) => j.stop(),
    }),
  ],
  migrations: uaicpMigrations,
  routes: (route) => [...viewRoutes(route), ...inventoryRoutes(route), ...forecastRoutes(route), ...routingRoutes(route), ...allPolicyRoutes(route), ...opsRoutes(route)],
});
