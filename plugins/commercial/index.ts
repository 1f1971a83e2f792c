import { billingRef } from '../../core/contracts/billing';
import { llmRef } from '../../core/contracts/llm';
import { featuresRef, usageRef } from '../../core/contracts/usage';
import type { BeforeHook } from '../../core/http/pipeline';
import { definePlugin, type Resolved } from '../../core/plugin';
import { core } from '../../core/services';
import { customerRoutes } from './customer-routes';
import { experimentRoutes } from './experiments';
import { exportRoutes } from './export';
import { gtmRoutes } from './gtm';
import { commercialMigrations } from './migrations';
import { provisioningRoutes } from './provisioning';
import { quotaHook } from './quotas';
import { slaRoutes } from './sla';
import { statusRoutes } from './status';

const deps = {
  db: core.db, config: core.config, actions: core.actions, clock: core.clock, mesh: core.mesh, events: core.events, limits: core.limits, accounts: core.accounts,
  lifecycle: core.lifecycle, pipeline: core.pipeline, usage: usageRef, features: featuresRef, billing: billingRef, llm: llmRef,
};
export type Deps = Resolved<typeof deps>;

// The kernel quota hook each host's pipeline got, so that stop takes it out again.
const hooks = new WeakMap<object, BeforeHook>();

/**
 * The commercial and customer groups (spec 4.19): SLAs and their reports, customer
 * provisioning, production health, lifecycle, success and ROI (with A/B experiments on the
 * kernels), go-to-market helpers, compliance export, the public status page and the POV report.
 */
export default definePlugin({
  id: 'commercial',
  prefix: '',
  deps,
  migrations: commercialMigrations,
  start: (d) => {
    const hook = quotaHook(d.db, d.usage, () => d.clock.now());
    d.pipeline.before.push(hook);
    hooks.set(d.pipeline, hook);
  },
  stop: (d) => {
    const i = d.pipeline.before.indexOf(hooks.get(d.pipeline)!);
    if (i >= 0) d.pipeline.before.splice(i, 1);
  },
  routes: (route) => [
    ...slaRoutes(route), ...provisioningRoutes(route), ...statusRoutes(route), ...customerRoutes(route), ...experimentRoutes(route), ...gtmRoutes(route), ...exportRoutes(route),
  ],
});
