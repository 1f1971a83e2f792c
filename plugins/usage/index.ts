import { featuresRef, usageRef } from '../../core/contracts/usage';
import { definePlugin, provide, type Resolved } from '../../core/plugin';
import { core } from '../../core/services';
import { FEATURE_CACHE_MAX, Features } from './features';
import { usageHook, watchTasks } from './hooks';
import { Meter } from './meter';
import { usageMigrations } from './migrations';
import { usageRoutes } from './routes';

const deps = { db: core.db, config: core.config, actions: core.actions, clock: core.clock, pipeline: core.pipeline, mesh: core.mesh, telemetry: core.telemetry, usage: usageRef, features: featuresRef };
export type Deps = Resolved<typeof deps>;

// What start added to the pipeline and the mesh, so that stop can take it out again.
const undo = new WeakMap<object, () => void>();

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
      deps: { db: core.db, log: core.log, config: core.config, mesh: core.mesh },
      factory: ({ db, log, config }) => new Meter(db, log, config.billing.usageFlushMs),
      stop: (meter) => meter.flush(),
    }),
    provide(featuresRef, {
      deps: { db: core.db, config: core.config, clock: core.clock },
      factory: ({ db, config, clock }) => new Features(db, config, () => clock.now()),
    }),
  ],
  migrations: usageMigrations,
  start: (d) => {
    const meter = d.usage as Meter;
    const hook = usageHook(meter, d.features as Features);
    d.pipeline.before.push(hook);
    const unwatch = watchTasks(d.mesh, meter);
    const features = d.features as Features;
    d.telemetry.caches.track({ name: 'usage.entitlements', entries: () => features.cached, limit: FEATURE_CACHE_MAX });
    undo.set(d.usage, () => {
      const i = d.pipeline.before.indexOf(hook);
      if (i >= 0) d.pipeline.before.splice(i, 1);
      unwatch();
    });
  },
  stop: async (d) => {
    undo.get(d.usage)?.();
    await d.usage.flush();
  },
  routes: (route) => usageRoutes(route),
});
