import { createServiceRef, type Resolved } from '../../core/plugin';
import { core } from '../../core/services';
import { approvalsRef, governanceRef } from '../../core/contracts/governance';
import { insightsRef, kpisRef } from '../../core/contracts/insights';
import { workflowsRef } from '../../core/contracts/workflows';
import type { Jobs } from './jobs';

/** Background work of this plugin (process runs, optimisations), awaited at stop. */
export const jobsRef = createServiceRef<Jobs>('enterprise.jobs');

export const deps = {
  db: core.db,
  mesh: core.mesh,
  config: core.config,
  actions: core.actions,
  events: core.events,
  clock: core.clock,
  kpis: kpisRef,
  insights: insightsRef,
  workflows: workflowsRef,
  governance: governanceRef,
  approvals: approvalsRef,
  jobs: jobsRef,
};
export type Deps = Resolved<typeof deps>;
