import type { Db } from '../../core/db';
import { NotFound } from '../../core/errors';
import type { Deps } from './index';
import type { BillingService } from './service';

/** The plugin's own parts behind the Billing contract it provides. */
export function svc(services: Pick<Deps, 'billing'>): BillingService {
  return services.billing as BillingService;
}

export async function tenantMustExist(db: Db, tenantId: string): Promise<void> {
  if (!(await db('tenants').where({ id: tenantId }).first('id'))) throw new NotFound('Tenant not found');
}
