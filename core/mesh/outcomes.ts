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
  const rows = (await base(db, f).select('node_id', db.raw('count(*) as n'), db.raw(`${FAILED} as failed`)).groupBy('node_id')) as Array<{ node_id: string; n: unknown; failed: unknown }>;
  return new Map(rows.map((r) => [r.node_id, { tasks: Number(r.n), failed: Number(r.failed) }]));
}

/** Nearest-rank percentiles (0–100) of a column over the window's `tasks` outcomes; null when there are none. */
export async function outcomePercentiles(db: Db, f: WindowFilter, column: 'duration_ms' | 'wait_ms', ps: number[], tasks: number): Promise<number[] | null> {
  if (tasks === 0) return null;
  const out: number[] = [];
  for (const p of ps) {
    const rank = Math.min(tasks - 1, Math.max(0, Math.ceil((p / 100) * tasks) - 1));
    const row = (await base(db, f).orderBy(column, 'asc').offset(rank).limit(1).first(column)) as Record<string, unknown> | undefined;
    out.push(Number(row?.[column] ?? 0));
  }
  return out;
}
