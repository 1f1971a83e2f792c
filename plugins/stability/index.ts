import { definePlugin, provide } from '../../core/plugin';
import { chaosRunsRef } from '../../core/contracts/chaos';
import { core } from '../../core/services';
import { deps, stabilityRef } from './deps';
import { checkRoutes } from './routes-checks';
import { loadRoutes } from './routes-load';
import { Stability } from './service';
import { stabilityMigrations } from './store';

/** Spec 4.18: the platform tests itself (stress, benchmarks, isolation, hardening) and rolls up launch readiness. */
export default definePlugin({
  id: 'stability',
  prefix: '',
  deps,
  provides: [
    provide(stabilityRef, {
      deps: { db: core.db, mesh: core.mesh, auth: core.auth, events: core.events, log: core.log, chaos: chaosRunsRef },
      factory: (d) => new Stability(d),
      start: (s) => s.start(),
      stop: (s) => s.stop(),
    }),
  ],
  migrations: stabilityMigrations,
  routes: (route) => [...loadRoutes(route), ...checkRoutes(route)],
});
