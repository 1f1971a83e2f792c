import { telemetryStoreRef } from '../../core/contracts/telemetry';
import { featuresRef, usageRef, type PlanFeatures, type UsageMeter } from '../../core/contracts/usage';
import type { Pipeline } from '../../core/http/pipeline';
import type { Mesh } from '../../core/mesh/mesh';
import type { TelemetryService } from '../../core/telemetry';
import { createServiceRef, definePlugin, optional, provide, type Resolved } from '../../core/plugin';
import { core } from '../../core/services';
import { FEATURE_CACHE_MAX, Features } from './features';
import { usageHook, watchTasks } from './hooks';
import { Meter } from './meter';
import { usageMigrations } from './migrations';
import { usageRoutes } from './routes';


/** What the plugin adds to this host's pipeline and mesh: added at start, taken out at stop. */
class Hooks {
  private undo: (() => void) | null = null;
  constructor(private readonly d: { pipeline: Pipeline; mesh: Mesh; telemetry: TelemetryService; usage: UsageMeter; features: PlanFeatures }) {}
  start() {
    const meter = this.d.usage as Meter;
    const features = this.d.features as Features;
    const hook = usageHook(meter, features);
    this.d.pipeline.before.push(hook);
    const unwatch = watchTasks(this.d.mesh, meter);
    this.d.telemetry.caches.track({ name: 'usage.entitlements', entries: () => features.cached, limit: FEATURE_CACHE_MAX });
    this.undo = () => {
      const i = this.d.pipeline.before.indexOf(hook);
      if (i >= 0) this.d.pipeline.before.splice(i, 1);
      unwatch();
    };
  }
  stop() {
    this.undo?.();
  }
}
const hooksRef = createServiceRef<Hooks>('usage.hooks');

const deps = { db: core.db, config: core.config, actions: core.actions, clock: core.clock, pipeline: core.pipeline, mesh: core.mesh, telemetry: core.telemetry, usage: usageRef, features: featuresRef, hooks: hooksRef };
export type Deps = Resolved<typeof deps>;

/**
 * Usage metering and plan entitlements: every authenticated request and every tenant's kernel
 * task is metered; routes that declare a `feature` are refused without it (403 PLAN_FEATURE).
 */
export default definePlugin({
  id: 'usage',
  prefix: '',
  deps,
  provides: [
    provide(usageRef, {
      deps: { db: core.db, log: core.log, config: core.config, mesh: core.mesh, events: optional(telemetryStoreRef) },
      factory: ({ db, log, config, events }) => new Meter(db, log, config.billing.usageFlushMs, events),
      stop: (meter) => meter.flush(),
    }),
    provide(hooksRef, {
      deps: { pipeline: core.pipeline, mesh: core.mesh, telemetry: core.telemetry, usage: usageRef, features: featuresRef },
      factory: (d) => new Hooks(d),
      start: (h) => h.start(),
      stop: (h) => h.stop(),
    }),
    provide(featuresRef, {
      deps: { db: core.db, config: core.config, clock: core.clock },
      factory: ({ db, config, clock }) => new Features(db, config, () => clock.now()),
    }),
  ],
  migrations: usageMigrations,
  routes: (route) => usageRoutes(route),
});
