import { definePlugin, provide } from '../../core/plugin';
import { Automation, automationDeps, automationRef } from './context';
import { deps } from './deps';
import { automationMigrations } from './migrations';
import { certRoutes } from './routes/certs';
import { checkRoutes } from './routes/checks';
import { customerRoutes } from './routes/customers';
import { deploymentRoutes } from './routes/deployments';
import { httpsRoutes } from './routes/https';
import { onboardingRoutes } from './routes/onboarding';
import { upgradeRoutes } from './routes/upgrade';

// Automation (spec 4.13) and onboarding, proof of value, upgrades (4.20): certificates, the
// service's own HTTPS listener, rolling deployments on the mesh, probes and readiness, the
// check scheduler, customer on- and offboarding, and upgrades. docs/groups/automation.md.
export default definePlugin({
  id: 'automation',
  prefix: '',
  deps,
  provides: [
    provide(automationRef, {
      deps: automationDeps,
      factory: (d) => new Automation(d),
      start: (a) => a.start(),
      stop: (a) => a.stop(),
    }),
  ],
  migrations: automationMigrations,
  routes: (route) => [
    ...certRoutes(route),
    ...httpsRoutes(route),
    ...deploymentRoutes(route),
    ...checkRoutes(route),
    ...customerRoutes(route),
    ...onboardingRoutes(route),
    ...upgradeRoutes(route),
  ],
});
