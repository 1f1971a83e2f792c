import { createServiceRef, type Resolved } from '../../core/plugin';
import { core } from '../../core/services';
import { approvalsRef, governanceRef } from '../../core/contracts/governance';
import { insightsRef } from '../../core/contracts/insights';
import { planningRef } from '../../core/contracts/planning';
import { workflowsRef } from '../../core/contracts/workflows';
import type { Autonomy } from './autonomy';
import type { Variants } from './variants';

// This plugin's own services (no other plugin uses them).
export const autonomyRef = createServiceRef<Autonomy>('autonomous.autonomy');
export const variantsRef = createServiceRef<Variants>('autonomous.variants');

const shared = { db: core.db, mesh: core.mesh, events: core.events, actions: core.actions, log: core.log, workflows: workflowsRef, governance: governanceRef, clock: core.clock };
export const autonomyDeps = { ...shared, approvals: approvalsRef, insights: insightsRef, leases: core.leases };
export const variantDeps = shared;
export type AutonomyDeps = Resolved<typeof autonomyDeps>;
export type VariantDeps = Resolved<typeof variantDeps>;

export const deps = { autonomy: autonomyRef, variants: variantsRef, planning: planningRef };
export type Deps = Resolved<typeof deps>;
