import type { Billing } from '../../../core/contracts/billing';
import { nowIso, type Db } from '../../../core/db';
import { HttpError, NotFound } from '../../../core/errors';
import { roleAtLeast, type Caller } from '../../../core/roles';
import type { Sealer } from '../certs/sealing';

/**
 * The API key an onboarding makes for its tenant. Onboarding runs in the background and its
 * record is read back many times, so the secret cannot ride in a step's outcome, and a mail
 * would leave it in the stored outbox: it is kept sealed until the tenant's operator (or a
 * platform admin) takes it once; the sealed copy is erased at that moment.
 */
export class OnboardingKeys {
  constructor(
    private readonly db: Db,
    private readonly sealer: Sealer,
    private readonly billing: Billing | null,
  ) {}

  get configured(): boolean {
    return this.billing !== null;
  }

  async create(tenantId: string, recordName: string, createdBy: string): Promise<{ key_id: string; reveal: string }> {
    const key = await this.billing!.createApiKey({ tenantId, name: `onboarding: ${recordName}`.slice(0, 128), scopes: ['execute', 'read'], createdBy });
    await this.db('automation_key_reveals').insert({ key_id: key.id, tenant_id: tenantId, sealed: this.sealer.seal(key.key), created_at: nowIso(), revealed_at: null, revealed_by: null });
    return { key_id: key.id, reveal: `/automation/keys/${key.id}/reveal` };
  }

  /** The key's state at the billing service, null when it no longer exists. */
  state(tenantId: string, keyId: string): Promise<'active' | 'expired' | 'revoked' | null> {
    return this.billing ? this.billing.apiKeyState(tenantId, keyId) : Promise.resolve(null);
  }

  async reveal(caller: Caller, keyId: string): Promise<{ key_id: string; tenant_id: string; key: string; revealed_at: string }> {
    const row = await this.db('automation_key_reveals').where({ key_id: keyId }).first();
    // Another tenant's key is not found rather than forbidden: its existence is not told.
    const mayRead = row && (caller.role === 'admin' || (caller.tenantId === row.tenant_id && roleAtLeast(caller.role, 'operator')));
    if (!mayRead) throw new NotFound('No onboarding API key with this id');
    const at = nowIso();
    // One reader wins: the update only matches while the sealed copy is still there.
    const won = await this.db('automation_key_reveals').where({ key_id: keyId }).whereNotNull('sealed').update({ sealed: null, revealed_at: at, revealed_by: caller.id });
    if (!won) {
      const done = await this.db('automation_key_reveals').where({ key_id: keyId }).first('revealed_at');
      throw new HttpError(410, `This key was revealed at ${String(done?.revealed_at)}; it is shown once. Revoke it and make a new one if it was lost.`, {}, 'KEY_ALREADY_REVEALED');
    }
    return { key_id: keyId, tenant_id: row.tenant_id as string, key: this.sealer.unseal(row.sealed as string), revealed_at: at };
  }
}
