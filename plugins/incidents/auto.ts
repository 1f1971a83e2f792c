import { z } from 'zod';
import type { BusEvent } from '../../core/events';
import type { Services } from '../../core/services';
import type { IncidentStore, Severity } from './store';

/** The actor the automated entries and actions name. */
export const AUTO_ACTOR = 'incidents';

const healthUpdate = z.object({
  kernel_id: z.string().min(1),
  node_id: z.string().min(1).nullish(),
  domain: z.string().min(1).nullish(),
  health: z.string(),
  previous: z.string().nullish(),
  reason: z.string().nullish(),
});
const breakerState = z.object({ kernel_id: z.string().min(1), state: z.string(), isolated: z.boolean().optional() });

interface Cause {
  key: string;
  /** true: the cause is present (open or note a recurrence); false: it went away. */
  present: boolean;
  title: string;
  severity: Severity;
  domain: string;
  kernel_id: string;
  node_id: string | null;
  reason: string;
  event: BusEvent;
}

function healthCause(e: BusEvent): Cause | null {
  const p = healthUpdate.safeParse(e.data);
  if (!p.success) return null;
  const d = p.data;
  const down = d.health === 'unhealthy';
  if (!down && d.previous !== 'unhealthy') return null;
  const what = d.node_id ? `Node ${d.node_id}` : `Kernel ${d.kernel_id}`;
  return {
    key: d.node_id ? `health:node:${d.node_id}` : `health:kernel:${d.kernel_id}`,
    present: down,
    title: `${what} unhealthy${d.reason ? `: ${d.reason}` : ''}`.slice(0, 200),
    // A whole kernel down hurts every tenant of the domain; one node is covered by its siblings.
    severity: d.node_id ? 'medium' : 'high',
    domain: d.domain ?? d.kernel_id,
    kernel_id: d.kernel_id,
    node_id: d.node_id ?? null,
    reason: d.reason ?? `health ${d.previous ?? 'unknown'} -> ${d.health}`,
    event: e,
  };
}

function breakerCause(e: BusEvent): Cause | null {
  const p = breakerState.safeParse(e.data);
  if (!p.success || p.data.state === 'half_open') return null;
  const open = p.data.state === 'open';
  return {
    key: `breaker:${p.data.kernel_id}`,
    present: open,
    title: `Circuit breaker of kernel ${p.data.kernel_id} opened${p.data.isolated ? ' (isolated by hand)' : ''}`,
    // An open breaker refuses every task of the kernel.
    severity: 'critical',
    domain: p.data.kernel_id,
    kernel_id: p.data.kernel_id,
    node_id: null,
    reason: `breaker ${p.data.state}`,
    event: e,
  };
}

/**
 * Opens one platform incident per cause (a node or kernel turning unhealthy, a breaker
 * opening) while an incident for that cause is active. A cause that comes back while its
 * incident is active adds a `recurred` entry; a cause that goes away adds `cause_cleared`
 * (resolving stays a person's decision). Events are handled one at a time, off the
 * publisher's call stack.
 */
export function watchMesh(services: Pick<Services, 'db' | 'events' | 'actions' | 'log' | 'mesh'>, store: IncidentStore): () => Promise<void> {
  let chain: Promise<void> = Promise.resolve();
  const handle = (cause: Cause | null) => {
    if (!cause) return;
    chain = chain.then(() => apply(services, store, cause)).catch((err: Error) => services.log.warn({ err: err.message, cause: cause.key }, 'automatic incident failed'));
  };
  const offs = [
    services.events.subscribe('health_update', (e) => handle(healthCause(e))),
    services.events.subscribe('breaker_state', (e) => handle(breakerCause(e))),
  ];
  // Stopping waits for the event being handled, so that it finishes before the database closes.
  return async () => {
    offs.forEach((off) => off());
    await chain;
  };
}

async function apply(services: Pick<Services, 'db' | 'events' | 'actions' | 'log' | 'mesh'>, store: IncidentStore, c: Cause): Promise<void> {
  const active = await store.activeByCause(c.key);
  const detail = { cause: c.key, event: { type: c.event.type, timestamp: c.event.timestamp, data: c.event.data } };
  if (active) {
    await store.note(active, { kind: c.present ? 'recurred' : 'cause_cleared', source: 'automated', actor: AUTO_ACTOR, detail: { ...detail, reason: c.reason } });
    return;
  }
  if (!c.present) return;
  const incident = await store.open({
    tenant_id: null,
    title: c.title,
    description: c.reason,
    severity: c.severity,
    domain: c.domain,
    kernel_id: c.kernel_id,
    node_id: c.node_id,
    source: 'automated',
    cause: c.key,
    actor: AUTO_ACTOR,
    detail,
  });
  if (!incident) return;
  await services.actions.record({
    source: 'automated',
    actor: AUTO_ACTOR,
    action: 'open_incident',
    target_type: 'incident',
    target_id: incident.id,
    cause: `${c.event.type}: ${c.reason}`.slice(0, 500),
    result: 'succeeded',
    detail: { cause_key: c.key, kernel_id: c.kernel_id, node_id: c.node_id, severity: c.severity },
  });
}
