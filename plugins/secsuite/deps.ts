import { securityRef } from '../../core/contracts/security';
import type { Resolved } from '../../core/plugin';
import type { Caller } from '../../core/roles';
import { core } from '../../core/services';

export const deps = { db: core.db, config: core.config, clock: core.clock, log: core.log, mesh: core.mesh, actions: core.actions, sec: securityRef };
export type Deps = Resolved<typeof deps>;

/** Records a configuration change (zones, policies, rules, providers, indicators) in the platform action log. */
export function audit(d: Deps, caller: Caller, action: string, targetType: string, targetId: string, detail: Record<string, unknown> = {}) {
  return d.actions.record({ source: 'manual', actor: caller.id, action, target_type: targetType, target_id: targetId, result: 'succeeded', detail, tenant_id: caller.tenantId });
}
