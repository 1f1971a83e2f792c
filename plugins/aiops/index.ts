import { modelRegistryRef } from '../../core/contracts/models';
import { definePlugin, provide } from '../../core/plugin';
import { core } from '../../core/services';
import { costRoutes } from './cost-routes';
import { deps, trainerRef } from './deps';
import { jobRoutes } from './jobs';
import { modelRoutes } from './models';
import { Registry } from './registry';
import { statusRoutes } from './status';
import { aiopsMigrations } from './store';
import { Trainer } from './training';

/** AI operations (/aiops): the model registry (shared with /uaicp), routing, training, costs. */
export default definePlugin({
  id: 'aiops',
  prefix: '/aiops',
  deps,
  provides: [
    provide(modelRegistryRef, {
      deps: { db: core.db, clock: core.clock },
      factory: ({ db, clock }) => new Registry(db, clock),
    }),
    provide(trainerRef, {
      deps: { db: core.db, mesh: core.mesh, events: core.events, log: core.log, clock: core.clock, registry: modelRegistryRef },
      factory: (d) => new Trainer(d),
      start: (t) => t.recover(),
      stop: (t) => t.stop(),
    }),
  ],
  migrations: aiopsMigrations,
  routes: (route) => [...statusRoutes(route), ...modelRoutes(route), ...jobRoutes(route), ...costRoutes(route)],
});
