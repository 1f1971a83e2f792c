// Taking over experiments whose process died mid-run (its claim in the database ran out):
// open injections are rolled back where this process can see them, and the experiment ends
// failed with the reason. Runs at start and with every lease renewal.
import { nowIso } from '../../../core/db';
import type { NodeControl } from '../../../kernels/sdk';
import type { ChaosService } from './service';
import { experimentOf } from './store';

export async function reclaim(chaos: ChaosService): Promise<number> {
  const { db, mesh } = chaos;
  const stale = await db('chaos_experiments').where({ status: 'running' }).andWhere('lease_until', '<', nowIso()).whereNot({ owner: chaos.owner });
  for (const r of stale) {
    const rows = await db('chaos_injections').where({ experiment_id: r.id }).whereNull('rolled_back_at');
    for (const i of rows) {
      const detail = JSON.parse(i.detail) as Record<string, unknown>;
      let note = 'the process that applied it ended; its worker threads and node states went with it';
      // A fault on another live host's node outlived the experiment's host: that host removes it.
      const remote = remoteOwner(chaos, i.node_id);
      if (remote) {
        const inj = { id: i.id, node_id: i.node_id, domain: i.domain, kind: i.kind, detail, applied: Boolean(i.applied_at), rolledBack: false };
        note = (await chaos.cluster.rollback(inj, { source: 'automated', actor: 'chaos', cause: `experiment ${r.id} taken over` }).catch((err: Error) => `rollback on host ${remote} failed: ${err.message}`)) ?? `removed by host ${remote}, which runs the node`;
        await db('chaos_injections').where({ id: i.id }).update({ rolled_back_at: nowIso(), rollback_note: note });
        continue;
      }
      const node = mesh.faults(i.node_id);
      const heldHere = [...chaos.live.values()].some((l) => l.injections.some((x) => x.node_id === i.node_id));
      // A control fault still set exactly as injected on a node of this process is removed here.
      if (node && detail.control && JSON.stringify(node.control) === JSON.stringify(detail.control) && !heldHere) {
        mesh.setControl(i.node_id, (detail.previous_control as NodeControl | null) ?? null);
        note = 'removed from the node at start';
      }
      await db('chaos_injections').where({ id: i.id }).update({ rolled_back_at: nowIso(), rollback_note: note });
    }
    const reason = `the process running it ended before it finished (its claim ran out at ${r.lease_until}); its injections were rolled back by a later start`;
    const n = await db('chaos_experiments').where({ id: r.id, status: 'running' }).update({ status: 'failed', phase: 'ended', reason, ended_at: nowIso(), rolled_back_at: r.rolled_back_at ?? (rows.length || r.injected_at ? nowIso() : null) });
    if (!n) continue;
    const def = experimentOf(r, []);
    chaos.publish('ended', { id: r.id, tenantId: r.tenant_id, def }, { status: 'failed', deviated: null, reason });
    await chaos.record(r.tenant_id, r.id, 'chaos_experiment_ended', 'chaos_experiment', r.id, { status: 'failed', reason, injections_rolled_back: rows.length });
  }
  return stale.length;
}

function remoteOwner(chaos: ChaosService, nodeId: string): string | null {
  try {
    return chaos.cluster.owner(nodeId);
  } catch {
    return null;
  }
}
