import { billingRef } from '../../core/contracts/billing';
import { featuresRef, usageRef } from '../../core/contracts/usage';
import { securityRef } from '../../core/contracts/security';
import { workflowsRef } from '../../core/contracts/workflows';
import { definePlugin, optional, provide, type Resolved } from '../../core/plugin';
import { core } from '../../core/services';
import { KEY_CACHE_MAX, registerKeyAuth } from './keys';
import { monetizationMigrations } from './migrations';
import { accountRoutes } from './routes-account';
import { marketRoutes } from './routes-market';
import { reportRoutes } from './routes-reports';
import { saasRoutes } from './routes-saas';
import { BillingService } from './service';

const deps = {
  db: core.db, config: core.config, actions: core.actions, clock: core.clock, mesh: core.mesh, auth: core.auth, limits: core.limits, telemetry: core.telemetry,
  usage: usageRef, features: featuresRef, billing: billingRef, sec: optional(securityRef), workflows: workflowsRef,
};
export type Deps = Resolved<typeof deps>;

/**
 * Monetization (spec 4.11) and billing (4.19): API keys as credentials, the double-entry ledger
 * and payments, the catalogue and subscriptions, the marketplace and its public monetized runs,
 * invoices, revenue, cost and investor figures (docs/groups/billing.md).
 */
export default definePlugin({
  id: 'monetization',
  prefix: '',
  deps,
  provides: [
    provide(billingRef, {
      deps: { db: core.db, config: core.config, mesh: core.mesh, clock: core.clock, actions: core.actions, usage: usageRef, features: featuresRef },
      factory: ({ db, config, mesh, clock, actions, usage, features }) => new BillingService(db, config, mesh, usage, features, () => clock.now(), actions),
    }),
  ],
  migrations: monetizationMigrations,
  start: (d) => {
    const keys = registerKeyAuth(d.auth, d.db, d.limits, () => d.clock.now());
    d.telemetry.caches.track({ name: 'monetization.api_key_last_used', entries: keys.entries, limit: KEY_CACHE_MAX });
    // API keys appear in the tenant security report's key review, when security runs.
    d.sec?.addKeySource({
      name: 'api_keys',
      list: (tenantId) => d.db('api_keys').where({ tenant_id: tenantId }).whereNull('revoked_at').select('id', 'name', 'created_at', 'last_used_at'),
    });
  },
  routes: (route) => [...accountRoutes(route), ...marketRoutes(route), ...reportRoutes(route), ...saasRoutes(route)],
});
