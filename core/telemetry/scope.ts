import { Forbidden } from '../errors';
import type { Caller } from '../roles';

/**
 * The tenant whose telemetry a request reads: the caller's own, or for an admin user the
 * one named by `tenant_id`. Anyone else naming another tenant is refused.
 */
export function scopeTenant(caller: Caller, requested?: string): string {
  if (!requested || requested === caller.tenantId) return caller.tenantId;
  if (caller.kind === 'user' && caller.role === 'admin') return requested;
  throw new Forbidden('Only admins may read another tenant\'s telemetry');
}

/** [since, until) of a query: until defaults to now, since to `defaultMs` before until. */
export function window(q: { since?: string; until?: string }, defaultMs: number): { since: string; until: string } {
  const until = q.until ? new Date(q.until) : new Date();
  const since = q.since ? new Date(q.since) : new Date(until.getTime() - defaultMs);
  return { since: since.toISOString(), until: until.toISOString() };
}
