import { z } from 'zod';
import { isPostgres } from '../../core/db';
import type { Caller } from '../../core/roles';
import type { Deps } from './deps';

const stat = z.object({ type: z.string(), accepted: z.number(), duplicates: z.number(), rejected: z.number(), batches: z.number(), last_ingest_at: z.string() });

export const pipelineFiguresSchema = z.object({
  tenant_id: z.string(),
  ingest: z.object({ by_type: z.array(stat), accepted: z.number(), duplicates: z.number(), rejected: z.number(), batches: z.number() }),
  stored: z.object({ by_type: z.record(z.string(), z.number()), events: z.number(), payload_bytes: z.number() }),
  storage: z.object({ events_table_bytes: z.number().nullable() }).nullable(),
});

/**
 * Counts of everything the pipeline took in for a tenant (kept in the same transaction as
 * the events), the events stored now, and their payload bytes. The size of the whole
 * table (every tenant) is shown to admins only.
 */
export async function pipelineFigures(services: Pick<Deps, 'db' | 'events'>, tenantId: string, caller: Caller): Promise<z.infer<typeof pipelineFiguresSchema>> {
  const { store } = services.events;
  const db = services.db;
  const [stats, stored] = await Promise.all([store.stats(tenantId), store.storedCounts(tenantId)]);
  const bytesExpr = isPostgres(db) ? 'SUM(octet_length(data))' : 'SUM(length(CAST(data AS BLOB)))';
  const bytesRow = await db('telemetry_events').where('tenant_id', tenantId).first(db.raw(`${bytesExpr} AS n`));
  const sum = (k: 'accepted' | 'duplicates' | 'rejected' | 'batches') => stats.reduce((a, s) => a + s[k], 0);
  const isAdmin = caller.kind === 'user' && caller.role === 'admin';
  return {
    tenant_id: tenantId,
    ingest: { by_type: stats, accepted: sum('accepted'), duplicates: sum('duplicates'), rejected: sum('rejected'), batches: sum('batches') },
    stored: { by_type: stored, events: Object.values(stored).reduce((a, b) => a + b, 0), payload_bytes: Number(bytesRow?.n ?? 0) },
    storage: isAdmin ? { events_table_bytes: await store.tableBytes() } : null,
  };
}
