import type { Db } from '../../core/db';
import { NotFound } from '../../core/errors';
import type { Caller } from '../../core/roles';
import { namedTenantScope } from '../../core/tenancy';
import { monthOf } from './catalogue';
import type { Deps } from './index';
import type { BillingService } from './service';

/** The plugin's own parts behind the Billing contract it provides. */
export function svc(services: Pick<Deps, 'billing'>): BillingService {
  return services.billing as BillingService;
}

export async function tenantMustExist(db: Db, tenantId: string): Promise<void> {
  if (!(await db('tenants').where({ id: tenantId }).first('id'))) throw new NotFound('Tenant not found');
}

/** A tenant a dashboard names (own, or any for admins), its entitlements, and the current month. */
export async function tenantMonth(services: Pick<Deps, 'billing' | 'db' | 'features' | 'clock'>, caller: Caller, tenantId: string) {
  const scope = namedTenantScope(services.db, caller, tenantId);
  const ent = await services.features.entitlements(scope.tenantId);
  if (!ent) throw new NotFound('Tenant not found');
  const now = services.clock.now();
  return { s: svc(services), scope, ent, now, period: monthOf(now) };
}
