import { createServiceRef } from '../plugin';

// Money and keys of plugin `monetization`, for the commercial and customer plugins
// (docs/groups/billing.md). Amounts are decimal strings with their currency; `minor` is the
// same amount in integer minor units, for arithmetic.
export interface Amount {
  amount: string;
  currency: string;
  minor: number;
}

export interface Billing {
  /** Formats minor units of the billing currency. */
  format(minor: number): Amount;
  /** Creates an API key (the secret is in the answer only). */
  createApiKey(k: { tenantId: string; name: string; scopes: Array<'execute' | 'read' | 'write'>; createdBy: string }): Promise<{ id: string; key: string }>;
  /** A key's state now, null when the tenant has no key with this id. */
  apiKeyState(tenantId: string, id: string): Promise<'active' | 'expired' | 'revoked' | null>;
  /** The tenant's invoice total for a month (`YYYY-MM`), as computed now (a past month is final). */
  invoiceTotal(tenantId: string, period: string): Promise<Amount & { plan_fee_minor: number }>;
  /** What the tenant was charged in [from, to): ledger charges plus closed invoices, less refunds, and the plan fee accrued. */
  spend(tenantId: string, from: string, to: string): Promise<Amount>;
  /** What the tenant owes now (receivable balance; negative = credit). */
  balance(tenantId: string): Promise<Amount>;
}

export const billingRef = createServiceRef<Billing>('monetization.billing');
