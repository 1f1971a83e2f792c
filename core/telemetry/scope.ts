import { z } from 'zod';
import { Forbidden, invalid } from '../errors';
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

const HOUR = 3600_000;
const iso = z.iso.datetime({ offset: true });

/** The query of an aggregate over a window (the query API's and the operator console's). */
export const windowQuery = z.object({
  since: iso.optional().describe('Start (inclusive); default: one hour before until'),
  until: iso.optional().describe('End (exclusive); default: now'),
  group_by: z.string().max(200).optional().describe('Comma-separated group names, or none'),
  tenant_id: z.string().min(1).max(64).optional().describe('Another tenant (admins only)'),
});

/** The resolved window of a query (one hour by default, at most 31 days) with its tenant. */
export function checkedWindow(q: { since?: string; until?: string }, tenantId: string): { since: string; until: string; tenantId: string } {
  const w = window(q, HOUR);
  // Checked on the resolved window, so that a `since` after the default `until` (now) is refused too.
  if (Date.parse(w.since) >= Date.parse(w.until)) throw invalid(['query', 'since'], 'since must be before until');
  if (Date.parse(w.until) - Date.parse(w.since) > 31 * 24 * HOUR) throw invalid(['query', 'since'], 'a window spans at most 31 days');
  return { ...w, tenantId };
}
