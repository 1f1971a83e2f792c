import type { TelemetryStore } from '../../core/contracts/telemetry';
import { isPostgres, type Db } from '../../core/db';
import type { Logger } from '../../core/logger';
import type { Metric, UsageMeter, UsageQuery, UsageRecord, UsageRow } from '../../core/contracts/usage';

/** Upper bounds (ms) of the request latency histogram; the last bucket is open. */
export const LATENCY_BUCKETS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000];

export function latencyBucket(ms: number): string {
  for (const b of LATENCY_BUCKETS) if (ms <= b) return `le_${b}`;
  return 'le_inf';
}

/** The hour a moment falls in: `2026-01-02T13`. */
function hourOf(d: Date): string {
  return d.toISOString().slice(0, 13);
}

type Key = string;

/**
 * Meters usage per tenant, API key, metric, dimension and hour. Records add to an in-memory
 * map; a timer writes the map as one upsert batch (quantity += ...), so a request or task pays
 * a map update only. Telemetry events and LLM tokens also come from the telemetry store
 * (what pipelines ingested), read at query time.
 */
export class Meter implements UsageMeter {
  private pending = new Map<Key, { tenant_id: string; key_id: string; metric: string; dimension: string; hour: string; quantity: number }>();
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();
  private tables: { at: number; list: string[] } | null = null;
  /** Quantities lost because the database refused a batch (visible in logs). */
  dropped = 0;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly flushMs: number,
    /** The telemetry store (plugin observability), when it runs: ingested events and LLM tokens. */
    private readonly events: TelemetryStore | null,
  ) {}

  record(r: UsageRecord): void {
    if (!(r.quantity > 0)) return;
    const hour = hourOf(r.at ?? new Date());
    const keyId = r.keyId ?? '';
    const dimension = r.dimension ?? '';
    const k = `${r.tenantId}\u0000${keyId}\u0000${r.metric}\u0000${dimension}\u0000${hour}`;
    const row = this.pending.get(k);
    if (row) row.quantity += r.quantity;
    else this.pending.set(k, { tenant_id: r.tenantId, key_id: keyId, metric: r.metric, dimension, hour, quantity: r.quantity });
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const rows = [...this.pending.values()];
    this.pending = new Map();
    if (rows.length === 0) return this.writing;
    this.writing = this.writing.then(async () => {
      try {
        await this.db.transaction(async (trx) => {
          for (let i = 0; i < rows.length; i += 500) {
            await trx('usage_counters')
              .insert(rows.slice(i, i + 500))
              .onConflict(['tenant_id', 'key_id', 'metric', 'dimension', 'hour'])
              .merge({ quantity: trx.raw('usage_counters.quantity + excluded.quantity') });
          }
        });
      } catch (err) {
        this.dropped += rows.length;
        this.log.warn({ err: (err as Error).message, rows: rows.length }, 'usage not written');
      }
    });
    return this.writing;
  }

  async query(q: UsageQuery): Promise<UsageRow[]> {
    await this.flush();
    const metrics = q.metrics ?? [];
    const want = (m: Metric) => metrics.length === 0 || metrics.includes(m);
    const fromHour = q.from.slice(0, 13);
    // Windows are whole hours: the hour holding `from` up to the hour holding the moment before `to`.
    const lastHour = new Date(Date.parse(q.to) - 1).toISOString().slice(0, 13);
    const width = q.granularity === 'hour' ? 13 : 10;
    const rows: UsageRow[] = [];
    const period = (hour: string) => (q.granularity === 'total' ? q.from : q.granularity === 'hour' ? `${hour.slice(0, width)}:00:00.000Z` : `${hour.slice(0, width)}T00:00:00.000Z`);
    const counters = this.db('usage_counters').where('hour', '>=', fromHour).andWhere('hour', '<=', lastHour);
    if (q.tenantId) counters.where('tenant_id', q.tenantId);
    if (q.keyId) counters.where('key_id', q.keyId);
    if (metrics.length) counters.whereIn('metric', metrics);
    const sums = new Map<string, UsageRow>();
    const add = (r: Omit<UsageRow, 'quantity'>, quantity: number) => {
      const k = `${r.period}|${r.tenant_id}|${r.key_id}|${r.metric}|${r.dimension}`;
      const cur = sums.get(k);
      if (cur) cur.quantity += quantity;
      else sums.set(k, { ...r, quantity });
    };
    for (const r of await counters.select('tenant_id', 'key_id', 'metric', 'dimension', 'hour', 'quantity')) {
      add({ period: period(r.hour), tenant_id: r.tenant_id, key_id: r.key_id || null, metric: r.metric, dimension: r.dimension }, Number(r.quantity));
    }
    // Telemetry is per tenant, not per key: a key filter leaves it out.
    if (!q.keyId && (want('telemetry_events') || want('llm_tokens'))) {
      for (const r of this.events ? await this.events.hourly({ from: q.from, to: q.to, tenantId: q.tenantId }) : []) {
        if (want('telemetry_events')) add({ period: period(r.hour), tenant_id: r.tenant_id, key_id: null, metric: 'telemetry_events', dimension: r.type }, Number(r.events));
        if (want('llm_tokens') && Number(r.tokens) > 0) add({ period: period(r.hour), tenant_id: r.tenant_id, key_id: null, metric: 'llm_tokens', dimension: r.model ?? '' }, Number(r.tokens));
      }
    }
    rows.push(...sums.values());
    return rows.sort((a, b) => a.period.localeCompare(b.period) || a.tenant_id.localeCompare(b.tenant_id) || a.metric.localeCompare(b.metric) || a.dimension.localeCompare(b.dimension));
  }

  async totals(metric: Metric, from: string, to: string, tenantId?: string): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const r of await this.query({ metrics: [metric], from, to, tenantId, granularity: 'total' })) {
      out.set(r.tenant_id, (out.get(r.tenant_id) ?? 0) + r.quantity);
    }
    return out;
  }

  async tenantTables(): Promise<string[]> {
    if (this.tables && this.tables.at > Date.now() - 60_000) return this.tables.list;
    let list: string[];
    if (isPostgres(this.db)) {
      const r = await this.db.raw("select table_name from information_schema.columns where column_name = 'tenant_id' and table_schema = current_schema()");
      list = r.rows.map((x: { table_name: string }) => x.table_name);
    } else {
      const tables: Array<{ name: string }> = await this.db.raw("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'");
      list = [];
      for (const t of tables) {
        const cols: Array<{ name: string }> = await this.db.raw('select name from pragma_table_info(?)', [t.name]);
        if (cols.some((c) => c.name === 'tenant_id')) list.push(t.name);
      }
    }
    list.sort();
    this.tables = { at: Date.now(), list };
    return list;
  }

  async storageBytes(tenantId: string): Promise<number> {
    await this.flush();
    let total = 0;
    for (const table of await this.tenantTables()) {
      if (isPostgres(this.db)) {
        const r = await this.db.raw('select coalesce(sum(pg_column_size(t.*)), 0) as bytes from ?? t where tenant_id = ?', [table, tenantId]);
        total += Number(r.rows[0].bytes);
      } else {
        const cols: Array<{ name: string }> = await this.db.raw('select name from pragma_table_info(?)', [table]);
        const expr = cols.map((c) => `coalesce(length(cast("${c.name.replace(/"/g, '""')}" as blob)), 0)`).join(' + ');
        const [r] = await this.db.raw(`select coalesce(sum(${expr}), 0) as bytes from ?? where tenant_id = ?`, [table, tenantId]);
        total += Number(r.bytes);
      }
    }
    return total;
  }

  async latencyPercentile(tenantId: string, from: string, to: string, p: number): Promise<number | null> {
    const rows = await this.query({ tenantId, metrics: ['request_latency'], from, to, granularity: 'total' });
    const counts = new Map<string, number>();
    for (const r of rows) counts.set(r.dimension, (counts.get(r.dimension) ?? 0) + r.quantity);
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    if (total === 0) return null;
    // The upper bound of the bucket holding the p-th request: an upper estimate, never below the truth.
    const rank = Math.ceil((p / 100) * total);
    let seen = 0;
    for (const b of LATENCY_BUCKETS) {
      seen += counts.get(`le_${b}`) ?? 0;
      if (seen >= rank) return b;
    }
    return Infinity;
  }
}
