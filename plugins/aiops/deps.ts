import { computeRef } from '../../core/contracts/compute';
import { modelRegistryRef } from '../../core/contracts/models';
import { invalid } from '../../core/errors';
import { createServiceRef, type Resolved } from '../../core/plugin';
import { core, type Clock } from '../../core/services';
import type { Trainer } from './training';

export const trainerRef = createServiceRef<Trainer>('aiops.trainer');

export const deps = {
  db: core.db,
  actions: core.actions,
  events: core.events,
  mesh: core.mesh,
  clock: core.clock,
  compute: computeRef,
  registry: modelRegistryRef,
  trainer: trainerRef,
};
export type Deps = Resolved<typeof deps>;

/** [since, until) of a request: until defaults to now, since to `defaultMs` before it; 422 when reversed. */
export function windowOf(q: { since?: string; until?: string }, clock: Clock, defaultMs: number) {
  const until = q.until ? new Date(q.until) : clock.now();
  const since = q.since ? new Date(q.since) : new Date(until.getTime() - defaultMs);
  if (since >= until) throw invalid(['query', 'since'], 'since must be before until');
  return { since: since.toISOString(), until: until.toISOString() };
}

export const DAY_MS = 86_400_000;
