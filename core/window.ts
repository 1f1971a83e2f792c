import { invalid } from './errors';
import type { Clock } from './services';

/**
 * [since, until) of a request as ISO strings: until defaults to the clock's now, since to
 * `defaultMs` before until; a 422 on `query.since` when it is not before until.
 */
export function windowOf(q: { since?: string; until?: string }, clock: Clock, defaultMs: number): { since: string; until: string } {
  const until = q.until ? new Date(q.until) : clock.now();
  const since = q.since ? new Date(q.since) : new Date(until.getTime() - defaultMs);
  if (since >= until) throw invalid(['query', 'since'], 'since must be before until');
  return { since: since.toISOString(), until: until.toISOString() };
}

/** The request's Idempotency-Key header (at most 128 characters), or undefined. */
export function idempotencyKey(headers: Record<string, string | string[] | undefined>): string | undefined {
  const v = headers['idempotency-key'];
  const key = Array.isArray(v) ? v[0] : v;
  if (key === undefined || key === '') return undefined;
  if (key.length > 128) throw invalid(['header', 'Idempotency-Key'], 'at most 128 characters');
  return key;
}
