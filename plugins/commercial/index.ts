import { accountsRef } from '../../core/contracts/accounts';
import { billingRef } from '../../core/contracts/billing';
import { incidentReadsRef } from '../../core/contracts/incidents';
import { workflowsRef } from '../../core/contracts/workflows';
import { llmRef } from '../../core/contracts/llm';
import { featuresRef, usageRef } from '../../core/contracts/usage';
import { createServiceRef, definePlugin, optional, provide, type Resolved } from '../../core/plugin';
import type { UsageMeter } from '../../core/contracts/usage';
import type { Db } from '../../core/db';
import type { Mesh } from '../../core/mesh/mesh';
import { core, type Clock } from '../../core/services';
import { customerRoutes } from './customer-routes';
import { experimentRoutes } from './experiments';
import { exportRoutes } from './export';
import { gtmRoutes } from './gtm';
import { commercialMigrations } from './migrations';
import { provisioningRoutes } from './provisioning';
import { quotaAdmitter } from './quotas';
import { slaRoutes } from './sla';
import { statusRoutes } from './status';

/** The kernel quota check on this host's mesh: added when the host starts, taken out at stop. */
class QuotaGate {
  readonly admit: ReturnType<typeof quotaAdmitter>;
  constructor(private readonly d: { db: Db; mesh: Mesh; usage: UsageMeter; clock: Clock }) {
    this.admit = quotaAdmitter(d.db, d.usage, () => d.clock.now());
  }
  start() {
    this.d.mesh.admitters.push(this.admit);
  }
  stop() {
    const i = this.d.mesh.admitters.indexOf(this.admit);
    if (i >= 0) this.d.mesh.admitters.splice(i, 1);
  }
}
const quotaGateRef = createServiceRef<QuotaGate>('commercial.quota-gate');

const deps = {
  db: core.db, config: core.config, actions: core.actions, clock: core.clock, mesh: core.mesh, events: core.events, limits: core.limits, accounts: accountsRef,
  lifecycle: core.lifecycle, pipeline: core.pipeline, usage: usageRef, features: featuresRef, billing: billingRef, llm: llmRef,
  incidents: optional(incidentReadsRef), workflows: optional(workflowsRef), quotaGate: quotaGateRef,
};
export type Deps = Resolved<typeof deps>;


/**
 * The commercial and customer groups (spec 4.19): SLAs and their reports, customer
 * provisioning, production health, lifecycle, success and ROI (with A/B experiments on the
 * kernels), go-to-market helpers, compliance export, the public status page and the POV report.
 */
export default definePlugin({
  id: 'commercial',
  prefix: '',
  deps,
  provides: [
    provide(quotaGateRef, {
      deps: { db: core.db, mesh: core.mesh, usage: usageRef, clock: core.clock },
      factory: (d) => new QuotaGate(d),
      start: (g) => g.start(),
      stop: (g) => g.stop(),
    }),
  ],
  migrations: commercialMigrations,
  routes: (route) => [
    ...slaRoutes(route), ...provisioningRoutes(route), ...statusRoutes(route), ...customerRoutes(route), ...experimentRoutes(route), ...gtmRoutes(route), ...exportRoutes(route),
  ],
});
