import { computeRef } from '../../core/contracts/compute';
import { definePlugin, provide } from '../../core/plugin';
import { core } from '../../core/services';
import { computeMigrations, Inventory } from './inventory';

/** The compute inventory that /uaicp and /aiops read (no routes of its own). */
export default definePlugin({
  id: 'compute',
  prefix: '',
  deps: {},
  provides: [
    provide(computeRef, {
      deps: { config: core.config, db: core.db, clock: core.clock },
      factory: ({ config, db, clock }) => new Inventory(config, db, clock),
    }),
  ],
  migrations: computeMigrations,
  routes: () => [],
});
