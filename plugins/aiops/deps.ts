import { computeRef } from '../../core/contracts/compute';
import { modelRegistryRef } from '../../core/contracts/models';
import { telemetryStoreRef } from '../../core/contracts/telemetry';
import { createServiceRef, type Resolved } from '../../core/plugin';
import { core } from '../../core/services';
import type { Trainer } from './training';

export const trainerRef = createServiceRef<Trainer>('aiops.trainer');

export const deps = {
  db: core.db,
  actions: core.actions,
  events: core.events,
  mesh: core.mesh,
  clock: core.clock,
  compute: computeRef,
  registry: modelRegistryRef,
  trainer: trainerRef,
  telemetryStore: telemetryStoreRef,
};
export type Deps = Resolved<typeof deps>;


export const DAY_MS = 86_400_000;
export { windowOf } from '../../core/window';
