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
