import { definePlugin, optional, provide } from '../../core/plugin';
import { accountsRef } from '../../core/contracts/accounts';
import { chaosRunsRef } from '../../core/contracts/chaos';
import { securityRef } from '../../core/contracts/security';
import { core } from '../../core/services';
import { deps, stabilityRef } from './deps';
import { checkRoutes } from './routes-checks';
import { loadRoutes } from './routes-load';
import { ANALYSIS_AGENT } from './failure';
import { Stability } from './service';
import { stabilityMigrations } from './store';

/** Spec 4.18: the platform tests itself (stress, benchmarks, isolation, hardening) and rolls up launch readiness. */
export default definePlugin({
  id: 'stability',
  prefix: '',
  deps,
  provides: [
    provide(stabilityRef, {
      deps: { db: core.db, mesh: core.mesh, auth: core.auth, events: core.events, log: core.log, chaos: chaosRunsRef, security: optional(securityRef), accounts: accountsRef },
      factory: (d) => new Stability(d),
      start: (s) => s.start(),
      stop: (s) => s.stop(),
    }),
  ],
  migrations: stabilityMigrations,
  // Failure analyses are insight chains of this platform agent (when the agi plugin is installed).
  start: async (d) => {
    await d.insights?.registerAgent({
      id: ANALYSIS_AGENT, tenant_id: null, name: 'Failure analysis', kind: 'analysis',
      description: 'Walks back from a failed task, workflow execution or incident over the stored records (POST /stability/failure/analyze) and names the candidate causes',
      role: 'viewer', permissions: [], state: 'active',
    });
  },
  routes: (route) => [...loadRoutes(route), ...checkRoutes(route)],
});
