import { computeRef } from '../../core/contracts/compute';
import { modelRegistryRef } from '../../core/contracts/models';
import { workflowsRef } from '../../core/contracts/workflows';
import { createServiceRef, type Resolved } from '../../core/plugin';
import { core } from '../../core/services';
import type { Jobs } from './jobs';

export const jobsRef = createServiceRef<Jobs>('uaicp.jobs');

export const deps = {
  db: core.db,
  actions: core.actions,
  events: core.events,
  mesh: core.mesh,
  clock: core.clock,
  config: core.config,
  compute: computeRef,
  registry: modelRegistryRef,
  jobs: jobsRef,
  workflows: workflowsRef,
};
export type Deps = Resolved<typeof deps>;

export const HOUR_MS = 3_600_000;
export { windowOf } from '../../core/window';

