import crypto from 'node:crypto';
import type { Db } from '../../core/db';
import type { EventBus } from '../../core/events';
import type { Logger } from '../../core/logger';
import type { Mesh } from '../../core/mesh/mesh';

export interface PredictiveParams {
  window_hours: number;
  bucket_minutes: number;
  horizon_buckets: number;
  /** An alert is raised where the forecast exceeds mean + k·stddev of the history (or `threshold`). */
  sigma: number;
  threshold?: number;
  categories?: string[];
}

export interface CategoryModel {
  category: string;
  events: number;
  points: number;
  method: 'holt' | 'holt_winters' | null;
  season_length: number | null;
  params: { alpha: number; beta: number; gamma: number } | null;
  /** Root-mean-square one-step-ahead error of the fit (events per bucket). */
  rmse: number | null;
  mean: number;
  stddev: number;
  threshold: number;
  forecast: number[];
  peak: number | null;
  alert: boolean;
  skipped: string | null;
}

const ALPHA = 0.5;
const BETA = 0.1;
const GAMMA = 0.1;
/** Fewer events than this in the window: no model (nothing to fit). */
const MIN_EVENTS = 3;

/**
 * Per-category event rates over a window, fitted on the analytics kernel (its `forecast`
 * task: Holt-Winters with a daily season when the history holds two days of hourly
 * buckets, Holt's linear trend otherwise). Runs in the background: queued → running →
 * succeeded | failed, each step a `security_predictive_run` bus event.
 */
export class Predictive {
  constructor(
    private readonly db: Db,
    private readonly events: EventBus,
    private readonly mesh: Mesh,
    private readonly log: Logger,
    private readonly now: () => Date,
  ) {}

  private async setState(id: string, tenantId: string, state: string, patch: Record<string, unknown> = {}) {
    await this.db('security_predictive_runs').where({ id }).update({ state, updated_at: this.now().toISOString(), ...patch });
    this.events.publish('security_predictive_run', { id, tenant_id: tenantId, state });
  }

  async start(tenantId: string, params: PredictiveParams): Promise<ReturnType<typeof runView>> {
    const at = this.now().toISOString();
    const row = { id: crypto.randomUUID(), tenant_id: tenantId, state: 'queued', params: JSON.stringify(params), result: null, error: null, created_at: at, updated_at: at };
    await this.db('security_predictive_runs').insert(row);
    this.events.publish('security_predictive_run', { id: row.id, tenant_id: tenantId, state: 'queued' });
    const work = this.run(row.id, tenantId, params).catch(async (err: Error) => {
      this.log.warn({ err: err.message }, 'predictive analysis failed');
      await this.setState(row.id, tenantId, 'failed', { error: err.message }).catch(() => undefined);
    });
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
    return runView(row);
  }

  readonly pending = new Set<Promise<void>>();

  async get(id: string, tenantId: string) {
    const row = await this.db('security_predictive_runs').where({ id, tenant_id: tenantId }).first();
    return row ? runView(row) : null;
  }

  private async run(id: string, tenantId: string, p: PredictiveParams): Promise<void> {
    await this.setState(id, tenantId, 'running');
    const end = this.now().getTime();
    const bucketMs = p.bucket_minutes * 60_000;
    const start = end - p.window_hours * 3_600_000;
    const buckets = Math.ceil((end - start) / bucketMs);
    const q = this.db('security_events').where({ tenant_id: tenantId }).where('created_at', '>=', new Date(start).toISOString()).select('category', 'created_at').limit(500_000);
    if (p.categories?.length) q.whereIn('category', p.categories);
    const series = new Map<string, number[]>();
    for (const r of await q) {
      const s = series.get(r.category) ?? new Array<number>(buckets).fill(0);
      const i = Math.min(buckets - 1, Math.floor((Date.parse(r.created_at) - start) / bucketMs));
      s[i] += 1;
      series.set(r.category, s);
    }
    for (const c of p.categories ?? []) if (!series.has(c)) series.set(c, new Array<number>(buckets).fill(0));
    const models: CategoryModel[] = [];
    for (const [category, values] of [...series].sort(([a], [b]) => a.localeCompare(b))) models.push(await this.fit(category, values, p));
    const alerts = [];
    for (const m of models.filter((x) => x.alert)) {
      const i = m.forecast.findIndex((v) => v > m.threshold);
      const alert = {
        id: crypto.randomUUID(), tenant_id: tenantId, run_id: id, category: m.category,
        severity: m.peak! > 2 * m.threshold ? 'high' : 'medium', threshold: m.threshold, predicted_peak: m.peak!,
        crosses_at: new Date(end + (i + 1) * bucketMs).toISOString(),
        model: JSON.stringify({ method: m.method, season_length: m.season_length, params: m.params, rmse: m.rmse, mean: m.mean, stddev: m.stddev, forecast: m.forecast, bucket_minutes: p.bucket_minutes }),
        created_at: this.now().toISOString(),
      };
      await this.db('security_predictive_alerts').insert(alert);
      alerts.push(alert.id);
    }
    const result = { window: { from: new Date(start).toISOString(), to: new Date(end).toISOString(), bucket_minutes: p.bucket_minutes }, models, alerts };
    await this.setState(id, tenantId, 'succeeded', { result: JSON.stringify(result) });
  }

  private async fit(category: string, values: number[], p: PredictiveParams): Promise<CategoryModel> {
    const events = values.reduce((a, b) => a + b, 0);
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    const stddev = Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length);
    const threshold = p.threshold ?? Math.max(1, mean + p.sigma * stddev);
    const base = { category, events, points: values.length, mean, stddev, threshold };
    if (events < MIN_EVENTS || values.length < 3) {
      return { ...base, method: null, season_length: null, params: null, rmse: null, forecast: [], peak: null, alert: false, skipped: `fewer than ${MIN_EVENTS} events or 3 buckets in the window` };
    }
    // A daily season needs two whole days of buckets to initialise.
    const perDay = Math.round(1440 / p.bucket_minutes);
    const season = 1440 % p.bucket_minutes === 0 && perDay >= 2 && values.length >= 2 * perDay ? perDay : undefined;
    const out = (await this.mesh.run('analytics', 'forecast', { series: values, horizon: p.horizon_buckets, season_length: season, alpha: ALPHA, beta: BETA, gamma: GAMMA })) as { forecast: number[]; sse: number; method: 'holt' | 'holt_winters' };
    const errors = values.length - (season ?? 1);
    const forecast = out.forecast.map((v) => Math.max(0, v));
    const peak = Math.max(...forecast);
    return { ...base, method: out.method, season_length: season ?? null, params: { alpha: ALPHA, beta: BETA, gamma: GAMMA }, rmse: Math.sqrt(out.sse / Math.max(1, errors)), forecast, peak, alert: peak > threshold, skipped: null };
  }
}

function runView(r: Record<string, any>) {
  return { id: r.id, tenant_id: r.tenant_id, state: r.state, params: JSON.parse(r.params), result: r.result ? JSON.parse(r.result) : null, error: r.error ?? null, created_at: r.created_at, updated_at: r.updated_at };
}
