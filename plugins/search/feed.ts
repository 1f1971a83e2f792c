import type { BusEvent, EventBus } from '../../core/events';
import type { Logger } from '../../core/logger';
import type { Mesh } from '../../core/mesh/mesh';
import type { SearchDocument, SearchIndex } from '../../core/contracts/search';

type Data = Record<string, any>;

/** Maps a bus event to the document it creates or changes; null for events that do not. */
export function documentOf(e: BusEvent): SearchDocument | null {
  const d = e.data as Data;
  switch (e.type) {
    case 'incident': {
      const i = d.incident as Data | undefined;
      if (!i?.id) return null;
      const body = [i.description, i.severity, i.state, i.domain, i.kernel_id, i.node_id].filter(Boolean).join(' ');
      return { type: 'incident', id: i.id, tenant_id: i.tenant_id ?? null, title: String(i.title), body, url: `/ops/incidents/${i.id}`, updated_at: i.updated_at };
    }
    case 'workflow_status':
      if (!d.workflow_id) return null;
      return { type: 'workflow', id: d.workflow_id, tenant_id: d.tenant_id ?? null, title: String(d.workflow_name), body: `last execution ${d.execution_id} ${d.state}`, url: `/workflows/${d.workflow_id}`, updated_at: e.timestamp };
    case 'chaos_experiment':
      if (!d.experiment_id) return null;
      return {
        type: 'chaos_experiment',
        id: d.experiment_id,
        tenant_id: d.tenant_id ?? null,
        title: `${d.injection_type} on ${(d.target_domains ?? []).join(', ')}`,
        body: `phase ${d.phase} scenario ${d.scenario_id ?? ''}`,
        url: `/chaos/experiments/${d.experiment_id}`,
        updated_at: e.timestamp,
      };
    default:
      return null;
  }
}

/**
 * Keeps the index current: every write another plugin announces on the bus is indexed as it
 * happens (in order, one at a time, so a later state never loses to an earlier one), and the
 * mesh's kernels and nodes, which are platform-wide, are indexed at start and on state changes.
 */
export function feedIndex(index: SearchIndex, events: EventBus, mesh: Mesh, log: Logger): { stop(): void; idle(): Promise<void> } {
  let chain: Promise<void> = Promise.resolve();
  const enqueue = (job: () => Promise<void>) => {
    chain = chain.then(job).catch((err: Error) => log.warn({ err: err.message }, 'search: indexing failed'));
  };
  // A burst of node changes needs one re-index of the mesh, not one per event.
  let meshPending = false;
  const indexMesh = () => {
    if (meshPending) return;
    meshPending = true;
    enqueue(async () => {
      meshPending = false;
      for (const k of mesh.kernels()) {
        await index.put({ type: 'kernel', id: k.id, tenant_id: null, title: k.id, body: `${k.description} tasks ${k.tasks.join(' ')} ${k.state} ${k.health}`, url: `/kernels/${k.id}` });
        for (const n of k.nodes) await index.put({ type: 'node', id: n.id, tenant_id: null, title: n.id, body: `node of ${k.id} ${n.state} ${n.health}`, url: `/mesh/nodes/${n.id}` });
      }
    });
  };
  indexMesh();
  const offs = [
    events.subscribe('*', (e) => {
      const doc = documentOf(e);
      if (doc) enqueue(() => index.put(doc));
      if (e.type === 'node_state' && (e.data as Data).state === 'removed') enqueue(() => index.remove('node', String((e.data as Data).node_id)));
      else if (e.type === 'node_state' || e.type === 'kernel_state') indexMesh();
    }),
  ];
  return { stop: () => offs.forEach((off) => off()), idle: () => chain };
}
