// Figures over the recorded task outcomes (task_outcomes) of a time window, computed in the
// database so that a long window never loads its rows into the host.
import type { Db } from '../db';

export interface WindowFilter {
  kernelId: string;
  /** ISO time; outcomes at or after it count. */
  since: string;
  nodeId?: string;
}

function base(db: Db, f: WindowFilter) {
  const q = db('task_outcomes').where('kernel_id', f.kernelId).andWhere('at', '>=', f.since);
  if (f.nodeId) q.andWhere('node_id', f.nodeId);
  return q;
}

// `ok` is a boolean on PostgreSQL and 0/1 on SQLite; `case when ok` reads both.
const FAILED = 'sum(case when ok then 0 else 1 end)';

/** Tasks and failed tasks of the window. */
export async function outcomeCounts(db: Db, f: WindowFilter): Promise<{ tasks: number; failed: number }> {
  const row = (await base(db, f).select(db.raw('count(*) as n'), db.raw(`${FAILED} as failed`)).first()) as { n: unknown; failed: unknown } | undefined;
  return { tasks: Number(row?.n ?? 0), failed: Number(row?.failed ?? 0) };
}

/** Tasks and failed tasks of the window per node. */
export async function outcomeCountsByNode(db: Db, f: WindowFilter): Promise<Map<string, { tasks: number; failed: number }>> {
  const rows: Array<{ node_id: string; n: unknown; failed: unknown }> = await base(db, f).select('node_id', db.raw('count(*) as n'), db.raw(`${FAILED} as failed`)).groupBy('node_id');
  return new Map(rows.map((r) => [r.node_id, { tasks: Number(r.n), failed: Number(r.failed) }]));
}

/** Nearest-rank percentiles (0–100) of a column over the window's `tasks` outcomes, in one query; null when there are none. */
export async function outcomePercentiles(db: Db, f: WindowFilter, column: 'duration_ms' | 'wait_ms', ps: number[], tasks: number): Promise<number[] | null> {
  if (tasks === 0) return null;
  const ranks = ps.map((p) => Math.min(tasks, Math.max(1, Math.ceil((p / 100) * tasks))));
  const ranked = base(db, f).select(db.raw('?? as v, row_number() over (order by ?? asc) as rn', [column, column]));
  const rows = (await db.select('rn', 'v').from(ranked.as('ranked')).whereIn('rn', [...new Set(ranks)])) as Array<{ rn: unknown; v: unknown }>;
  const at = new Map(rows.map((r) => [Number(r.rn), Number(r.v)]));
  // Rows written between the count and this query only add ranks; a rank past the end takes the largest found.
  const largest = rows.length ? Math.max(...rows.map((r) => Number(r.v))) : 0;
  return ranks.map((r) => at.get(r) ?? largest);
}
