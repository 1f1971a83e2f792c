// Autonomous operations (spec 4.8): automation opportunities, skills, generated agents,
// workflow evolution with canaries, and the corporate brain (the planning loop of plugin agi).
// Decisions and examples: docs/groups/autonomous.md.
import { definePlugin, provide } from '../../core/plugin';
import { Autonomy } from './autonomy';
import { brainRoutes } from './brain';
import { autonomyDeps, autonomyRef, deps, variantDeps, variantsRef } from './deps';
import { autonomousMigrations } from './migrations';
import { autonomyRoutes } from './routes';
import { Variants } from './variants';

export default definePlugin({
  id: 'autonomous',
  prefix: '/autonomous',
  deps,
  provides: [
    provide(autonomyRef, {
      deps: autonomyDeps,
      factory: (d) => new Autonomy(d),
      start: (svc) => svc.resume(),
      stop: (svc) => svc.shutdown(),
    }),
    provide(variantsRef, {
      deps: variantDeps,
      factory: (d) => {
        const v = new Variants(d);
        // Promotion is a governed action: policies and approvals apply to it like to mesh actions.
        d.governance.register(v.promoteKind());
        // Live canaries take their share of the workflow's real runs.
        d.workflows.registerRouter(v.router());
        return v;
      },
      stop: (svc) => svc.stop(),
    }),
  ],
  migrations: autonomousMigrations,
  routes: (route) => [...autonomyRoutes(route), ...brainRoutes(route)],
});
