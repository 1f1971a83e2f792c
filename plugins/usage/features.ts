import crypto from 'node:crypto';
import type { Config } from '../../core/config';
import type { Db } from '../../core/db';
import type { Entitlements, PlanFeatures } from '../../core/contracts/usage';

/**
 * What a tenant may use: its plan's features, its add-ons' features, and admin overrides
 * (an override wins either way). Answers are cached per tenant for `limits.planCacheMs`
 * (the same staleness the rate limits accept); a change made here clears the entry at once.
 */
/** Tenants whose entitlements are remembered at once; the oldest entry goes first. */
export const FEATURE_CACHE_MAX = 10_000;

export class Features implements PlanFeatures {
  private cache = new Map<string, { at: number; value: Promise<Entitlements | null> }>();

  get cached(): number {
    return this.cache.size;
  }

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly now: () => Date,
  ) {}

  /** Every feature a plan or an add-on knows. */
  known(): string[] {
    const all = new Set<string>();
    for (const p of Object.values(this.config.plans)) for (const f of p.features) all.add(f);
    for (const a of Object.values(this.config.billing.addons)) for (const f of a.features) all.add(f);
    return [...all].sort();
  }

  entitlements(tenantId: string): Promise<Entitlements | null> {
    const hit = this.cache.get(tenantId);
    if (hit && hit.at > Date.now() - this.config.limits.planCacheMs) return hit.value;
    const value = this.load(tenantId);
    this.cache.delete(tenantId);
    if (this.cache.size >= FEATURE_CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(tenantId, { at: Date.now(), value });
    value.catch(() => this.cache.delete(tenantId));
    return value;
  }

  private async load(tenantId: string): Promise<Entitlements | null> {
    const t = await this.db('tenants').where({ id: tenantId }).first('id', 'plan');
    if (!t) return null;
    const now = this.now().toISOString();
    const addons = (await this.db('tenant_addons').where({ tenant_id: tenantId }).andWhere('started_at', '<=', now).andWhere((w) => w.whereNull('ended_at').orWhere('ended_at', '>', now)).select('sku')).map((r) => r.sku as string);
    const overrides: Record<string, boolean> = {};
    for (const r of await this.db('feature_overrides').where({ tenant_id: tenantId }).select('feature', 'enabled')) overrides[r.feature] = r.enabled === true || r.enabled === 1;
    const fromPlan = [...(this.config.plans[t.plan]?.features ?? [])].sort();
    const fromAddons = [...new Set(addons.flatMap((a) => this.config.billing.addons[a]?.features ?? []))].sort();
    const features: Record<string, boolean> = {};
    for (const f of new Set([...this.known(), ...Object.keys(overrides)])) {
      features[f] = overrides[f] ?? (fromPlan.includes(f) || fromAddons.includes(f));
    }
    return { tenant_id: tenantId, plan: t.plan, features, from_plan: fromPlan, from_addons: fromAddons, overrides, addons: [...new Set(addons)].sort() };
  }

  async has(tenantId: string, feature: string): Promise<boolean> {
    return (await this.entitlements(tenantId))?.features[feature] === true;
  }

  async setOverride(tenantId: string, feature: string, enabled: boolean | null, by: string): Promise<Entitlements> {
    if (enabled === null) {
      await this.db('feature_overrides').where({ tenant_id: tenantId, feature }).delete();
    } else {
      await this.db('feature_overrides')
        .insert({ tenant_id: tenantId, feature, enabled, updated_by: by, updated_at: this.now().toISOString() })
        .onConflict(['tenant_id', 'feature'])
        .merge(['enabled', 'updated_by', 'updated_at']);
    }
    this.cache.delete(tenantId);
    return (await this.entitlements(tenantId))!;
  }

  async setAddon(tenantId: string, sku: string, active: boolean, at: string): Promise<void> {
    const open = await this.db('tenant_addons').where({ tenant_id: tenantId, sku }).whereNull('ended_at').first('id');
    if (active && !open) await this.db('tenant_addons').insert({ id: crypto.randomUUID(), tenant_id: tenantId, sku, started_at: at, ended_at: null });
    if (!active && open) await this.db('tenant_addons').where({ id: open.id }).update({ ended_at: at });
    this.cache.delete(tenantId);
  }

  async addonPeriods(tenantId: string, from: string, to: string) {
    const rows = await this.db('tenant_addons')
      .where({ tenant_id: tenantId })
      .andWhere('started_at', '<', to)
      .andWhere((w) => w.whereNull('ended_at').orWhere('ended_at', '>', from))
      .orderBy('started_at')
      .select('sku', 'started_at', 'ended_at');
    return rows.map((r) => ({ sku: r.sku as string, started_at: r.started_at as string, ended_at: (r.ended_at as string | null) ?? null }));
  }

  planChanged(tenantId: string): void {
    this.cache.delete(tenantId);
  }
}
