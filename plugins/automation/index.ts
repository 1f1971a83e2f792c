import { definePlugin } from '../../core/plugin';
import { startAutomation, stopAutomation } from './context';
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
  services: ['db', 'config', 'log', 'events', 'actions', 'mesh', 'health', 'lifecycle', 'accounts', 'auth'],
  migrations: automationMigrations,
  start: (services) => startAutomation(services),
  stop: (services) => stopAutomation(services),
  routes: [...certRoutes(), ...httpsRoutes(), ...deploymentRoutes(), ...checkRoutes(), ...customerRoutes(), ...onboardingRoutes(), ...upgradeRoutes()],
});
