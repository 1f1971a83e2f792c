import { computeRef } from '../../core/contracts/compute';
import { modelRegistryRef } from '../../core/contracts/models';
import { invalid } from '../../core/errors';
import { createServiceRef, type Resolved } from '../../core/plugin';
import { core, type Clock } from '../../core/services';
import type { Jobs } from './jobs';

export const jobsRef = createServiceRef<Jobs>('uaicp.jobs');

export const deps = {
  db: core.db,
  actions: core.actions,
  events: core.events,
  mesh: core.mesh,
  clock: core.clock,
  config: core.config,
  compute: computeRef,
  registry: modelRegistryRef,
  jobs: jobsRef,
};
export type Deps = Resolved<typeof deps>;

export const HOUR_MS = 3_600_000;

/** [since, until) of a request: until defaults to now, since to `defaultMs` before; 422 when reversed. */
export function windowOf(q: { since?: string; until?: string }, clock: Clock, defaultMs: number) {
  const until = q.until ? new Date(q.until) : clock.now();
  const since = q.since ? new Date(q.since) : new Date(until.getTime() - defaultMs);
  if (since >= until) throw invalid(['query', 'since'], 'since must be before until');
  return { since: since.toISOString(), until: until.toISOString() };
}
