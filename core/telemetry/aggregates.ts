import type { Db } from '../db';
import type { EventType } from './events';

/** Which stored column each group-by name reads, per kind (a whitelist: names never reach SQL). */
export const GROUP_COLUMNS = {
  'llm-call': { model: 'model', provider: 'provider', operation: 'name', status: 'status', kernel: 'kernel' },
  policy: { policy: 'name', decision: 'result', kernel: 'kernel' },
  outcome: { name: 'name', result: 'result', kernel: 'kernel' },
  evaluation: { metric: 'name', evaluator: 'provider', model: 'model', kernel: 'kernel' },
  kernel: { kernel: 'kernel', task: 'name', status: 'status' },
} as const satisfies Record<EventType, Record<string, string>>;

export interface Window {
  tenantId: string;
  since: string;
  until: string;
}

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
 * whitelisted columns. Percentiles of `valueColumn` use the nearest-rank method, computed
 * by the database with one window query (no rows are shipped to the process).
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
  const cols = groups.map((g) => map[g]!);
  const aliases = groups.map((_, i) => `g${i}`);
  const select = cols.map((c, i) => `${c} AS ${aliases[i]}`);
  const where = 'tenant_id = ? AND type = ? AND ts >= ? AND ts < ?';
  const binds = [w.tenantId, type, w.since, w.until];
  const exprs = Object.entries(sums).map(([alias, expr]) => `${expr} AS ${alias}`);
  const groupBy = cols.length ? ` GROUP BY ${cols.join(', ')}` : '';
  const main = await db.raw(`SELECT ${[...select, 'COUNT(*) AS n', ...exprs].join(', ')} FROM telemetry_events WHERE ${where}${groupBy}`, binds);
  const rows: Row[] = main.rows ?? main;

  const partition = cols.length ? `PARTITION BY ${cols.join(', ')} ` : '';
  const ranked = await db.raw(
    `SELECT ${[...aliases, 'v', 'rn', 'cnt'].join(', ')} FROM (
       SELECT ${[...select, `${valueColumn} AS v`].join(', ')},
         ROW_NUMBER() OVER (${partition}ORDER BY ${valueColumn}) AS rn,
         COUNT(*) OVER (${partition.trim()}) AS cnt
       FROM telemetry_events WHERE ${where} AND ${valueColumn} IS NOT NULL
     ) ranked
     WHERE rn = (cnt * 50 + 99) / 100 OR rn = (cnt * 95 + 99) / 100 OR rn = (cnt * 99 + 99) / 100`,
    binds,
  );
  const pct = new Map<string, Percentiles>();
  for (const r of (ranked.rows ?? ranked) as Row[]) {
    const key = JSON.stringify(aliases.map((a) => r[a] ?? null));
    const cnt = num(r.cnt);
    const rn = num(r.rn);
    const v = round(numOrNull(r.v));
    const p = pct.get(key) ?? { p50: null, p95: null, p99: null };
    if (rn === Math.ceil((cnt * 50) / 100)) p.p50 = v;
    if (rn === Math.ceil((cnt * 95) / 100)) p.p95 = v;
    if (rn === Math.ceil((cnt * 99) / 100)) p.p99 = v;
    pct.set(key, p);
  }
  return rows
    .map((r) => {
      const keyValues = aliases.map((a) => (r[a] === null || r[a] === undefined ? null : String(r[a])));
      const figures: Row = { count: num(r.n) };
      for (const alias of Object.keys(sums)) figures[alias] = numOrNull(r[alias]);
      return {
        key: Object.fromEntries(groups.map((g, i) => [g, keyValues[i]])),
        figures,
        percentiles: pct.get(JSON.stringify(keyValues)) ?? { p50: null, p95: null, p99: null },
      };
    })
    .sort((a, b) => num(b.figures.count) - num(a.figures.count));
}

export { round };
