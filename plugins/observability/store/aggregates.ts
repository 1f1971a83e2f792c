import { isPostgres, type Db } from '../../../core/db';
import type { EventType, Window } from '../../../core/contracts/telemetry';

/** Which stored column each group-by name reads, per kind (a whitelist: names never reach SQL). */
export const GROUP_COLUMNS = {
  'llm-call': { model: 'model', provider: 'provider', operation: 'name', status: 'status', kernel: 'kernel' },
  policy: { policy: 'name', decision: 'result', kernel: 'kernel' },
  outcome: { name: 'name', result: 'result', kernel: 'kernel' },
  evaluation: { metric: 'name', evaluator: 'provider', model: 'model', kernel: 'kernel' },
  kernel: { kernel: 'kernel', task: 'name', status: 'status' },
  span: { name: 'name', status: 'status', kernel: 'kernel' },
} as const satisfies Record<EventType, Record<string, string>>;

export type { Window } from '../../../core/contracts/telemetry';

export interface Percentiles {
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

type Row = Record<string, unknown>;
const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const round = (v: number | null, d = 3): number | null => (v === null ? null : Math.round(v * 10 ** d) / 10 ** d);

/**
 * Aggregates over one tenant's events of one kind in [since, until), grouped by `groups`
 * (names of GROUP_COLUMNS[type]). `sums` are extra SQL aggregate expressions over
 * whitelisted columns. Percentiles of `valueColumn` use the nearest-rank method.
 */
export async function aggregate(
  db: Db,
  type: EventType,
  w: Window,
  groups: string[],
  sums: Record<string, string>,
  valueColumn: 'duration_ms' | 'value',
): Promise<Array<{ key: Record<string, string | null>; figures: Row; percentiles: Percentiles }>> {
  const map = GROUP_COLUMNS[type] as Record<string, string>;
  const cols = groups.map((g) => map[g]);
  const aliases = groups.map((_, i) => `g${i}`);
  const select = cols.map((c, i) => `${c} AS ${aliases[i]}`);
  const where = 'tenant_id = ? AND type = ? AND ts >= ? AND ts < ?';
  const binds = [w.tenantId, type, w.since, w.until];
  const exprs = Object.entries(sums).map(([alias, expr]) => `${expr} AS ${alias}`);
  const groupBy = cols.length ? ` GROUP BY ${cols.join(', ')}` : '';
  // Percentiles (nearest rank, as percentile_disc) come from the same single scan: PostgreSQL
  // computes them; SQLite hands over each group's values as one string, sorted here. That
  // costs less than any window-function form on SQLite (tried: 3-6x slower).
  const pg = isPostgres(db);
  const pctExpr = pg
    ? `percentile_disc(ARRAY[0.5, 0.95, 0.99]::float8[]) WITHIN GROUP (ORDER BY ${valueColumn}) AS pcts`
    : `group_concat(${valueColumn}) AS vals`;
  const main = await db.raw(`SELECT ${[...select, 'COUNT(*) AS n', pctExpr, ...exprs].join(', ')} FROM telemetry_events WHERE ${where}${groupBy}`, binds);
  const rows: Row[] = main.rows ?? main;
  const percentilesOf = (r: Row): Percentiles => {
    if (pg) {
      const p = (r.pcts as Array<number | string | null> | null) ?? [null, null, null];
      return { p50: round(numOrNull(p[0])), p95: round(numOrNull(p[1])), p99: round(numOrNull(p[2])) };
    }
    if (typeof r.vals !== 'string' || !r.vals) return { p50: null, p95: null, p99: null };
    const parts = r.vals.split(',');
    const v = new Float64Array(parts.length);
    for (let i = 0; i < parts.length; i++) v[i] = Number(parts[i]);
    v.sort();
    const at = (p: number) => round(v[Math.max(0, Math.ceil((v.length * p) / 100) - 1)]);
    return { p50: at(50), p95: at(95), p99: at(99) };
  };

  return rows
    .map((r) => {
      const keyValues = aliases.map((a) => (r[a] === null || r[a] === undefined ? null : String(r[a] as string | number)));
      const figures: Row = { count: num(r.n) };
      for (const alias of Object.keys(sums)) figures[alias] = numOrNull(r[alias]);
      return {
        key: Object.fromEntries(groups.map((g, i) => [g, keyValues[i]])),
        figures,
        percentiles: percentilesOf(r),
      };
    })
    .sort((a, b) => num(b.figures.count) - num(a.figures.count));
}

export { round };
