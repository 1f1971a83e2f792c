import { createServiceRef, type Resolved } from '../../core/plugin';
import { core } from '../../core/services';
import { approvalsRef, governanceRef } from '../../core/contracts/governance';
import { insightsRef, kpisRef } from '../../core/contracts/insights';
import { planningRef } from '../../core/contracts/planning';
import { telemetryStoreRef } from '../../core/contracts/telemetry';
import type { Simulations } from './sim';

/** Simulations are this plugin's own (no other plugin uses them). */
export const simRef = createServiceRef<Simulations>('agi.simulations');

export const deps = {
  db: core.db,
  mesh: core.mesh,
  actions: core.actions,
  insights: insightsRef,
  kpis: kpisRef,
  governance: governanceRef,
  approvals: approvalsRef,
  planning: planningRef,
  sim: simRef,
  // The cost KPI and the price simulation read the events table of the telemetry store (plugin observability).
  telemetryStore: telemetryStoreRef,
};
export type Deps = Resolved<typeof deps>;
