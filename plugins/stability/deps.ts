import { insightsRef } from '../../core/contracts/insights';
import { telemetryStoreRef } from '../../core/contracts/telemetry';
import { createServiceRef, optional, type Resolved } from '../../core/plugin';
import { accountsRef } from '../../core/contracts/accounts';
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
  insights: optional(insightsRef),
  accounts: accountsRef,
  // Kernel traces count toward a kernel's observability score when the event store runs.
  telemetryStore: optional(telemetryStoreRef),
};
export type Deps = Resolved<typeof deps>;
