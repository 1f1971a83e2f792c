import { createServiceRef } from '../plugin';
// Usage metering and plan entitlements, provided by plugin `usage` and read by the billing,
// commercial and tenants plugins (docs/groups/billing.md).

/** The metered quantities. Counters unless noted. */
export const METRICS = [
  'requests', // HTTP requests by route group (dimension: first path segment)
  'request_errors', // of which answered 5xx (dimension: route group)
  'request_latency', // histogram: dimension = bucket upper bound in ms ("le_50", ..., "le_inf")
  'kernel_tasks', // finished kernel tasks (dimension: kernel)
  'kernel_task_errors', // of which failed (dimension: kernel)
  'kernel_cpu_ms', // worker run time of those tasks, ms (dimension: kernel)
  'telemetry_events', // events ingested (dimension: event type); read from the telemetry store
  'llm_tokens', // tokens of LLM calls (dimension: model): recorded by plugins, plus ingested LLM telemetry
  'public_runs', // monetized public workflow runs (dimension: marketplace item id)
  'storage_bytes', // gauge: bytes the tenant's stored rows hold, measured when asked
] as const;
export type Metric = (typeof METRICS)[number];

export interface UsageRecord {
  tenantId: string;
  /** The API key that made the call, if any. */
  keyId?: string | null;
  metric: Metric;
  dimension?: string;
  quantity: number;
  /** When it happened; now when absent. */
  at?: Date;
}

export interface UsageQuery {
  tenantId?: string;
  keyId?: string;
  metrics?: Metric[];
  /** Inclusive start, exclusive end (ISO 8601). */
  from: string;
  to: string;
  granularity: 'hour' | 'day' | 'total';
}

export interface UsageRow {
  /** Bucket start (ISO 8601 UTC); the window start for `total`. */
  period: string;
  tenant_id: string;
  key_id: string | null;
  metric: Metric;
  dimension: string;
  quantity: number;
}

export interface UsageMeter {
  /** Buffers a quantity; written in the next batch (usage is never on the request's path). */
  record(r: UsageRecord): void;
  /** Writes what is buffered (queries call it first). */
  flush(): Promise<void>;
  query(q: UsageQuery): Promise<UsageRow[]>;
  /** Sum of one metric per tenant over a window (all dimensions and keys). */
  totals(metric: Metric, from: string, to: string, tenantId?: string): Promise<Map<string, number>>;
  /** Every table that holds tenants' rows (has a tenant_id column), sorted. */
  tenantTables(): Promise<string[]>;
  /** Bytes of the tenant's stored rows, measured now (every table with a tenant_id). */
  storageBytes(tenantId: string): Promise<number>;
  /** p-th percentile (0..100) of request latency from the histogram, ms; null without requests. */
  latencyPercentile(tenantId: string, from: string, to: string, p: number): Promise<number | null>;
}

export interface Entitlements {
  tenant_id: string;
  plan: string;
  /** Every feature any plan or add-on knows, with whether the tenant has it. */
  features: Record<string, boolean>;
  /** Features the plan gives, add-ons give, and admin overrides (true/false). */
  from_plan: string[];
  from_addons: string[];
  overrides: Record<string, boolean>;
  addons: string[];
}

export interface PlanFeatures {
  /** Null when the tenant does not exist. */
  entitlements(tenantId: string): Promise<Entitlements | null>;
  has(tenantId: string, feature: string): Promise<boolean>;
  /** Sets (enabled true/false) or clears (null) an override. */
  setOverride(tenantId: string, feature: string, enabled: boolean | null, by: string): Promise<Entitlements>;
  /** The tenant's plan changed: the next answer reads it again. */
  planChanged(tenantId: string): void;
  /** Adds or ends an add-on (from `at`). */
  setAddon(tenantId: string, sku: string, active: boolean, at: string): Promise<void>;
  /** Add-on periods of a tenant that overlap [from, to). */
  addonPeriods(tenantId: string, from: string, to: string): Promise<Array<{ sku: string; started_at: string; ended_at: string | null }>>;
}

export const usageRef = createServiceRef<UsageMeter>('usage.meter');
export const featuresRef = createServiceRef<PlanFeatures>('usage.features');
