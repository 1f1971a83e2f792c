import { createServiceRef, type Resolved } from '../../core/plugin';
import { core } from '../../core/services';
import type { Stability } from './service';

export const stabilityRef = createServiceRef<Stability>('stability.runs');

export const deps = {
  db: core.db,
  mesh: core.mesh,
  config: core.config,
  auth: core.auth,
  health: core.health,
  lifecycle: core.lifecycle,
  actions: core.actions,
  stability: stabilityRef,
};
export type Deps = Resolved<typeof deps>;
