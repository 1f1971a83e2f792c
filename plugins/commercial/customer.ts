import type { Billing } from '../../core/contracts/billing';
import type { UsageMeter } from '../../core/contracts/usage';
import type { Db } from '../../core/db';
import type { Mesh } from '../../core/mesh/mesh';

const DAY = 86_400_000;

export interface Daily {
  day: string;
  requests: number;
  request_errors: number;
  kernel_tasks: number;
  kernel_task_errors: number;
}

/** Per-day usage of the last `days` days, oldest first (days without use are zeros). */
export async function daily(usage: UsageMeter, tenantId: string, now: Date, days: number): Promise<Daily[]> {
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) + DAY);
  const from = new Date(end.getTime() - days * DAY);
  const map = new Map<string, Daily>();
  for (let i = 0; i < days; i++) {
    const day = new Date(from.getTime() + i * DAY).toISOString().slice(0, 10);
    map.set(day, { day, requests: 0, request_errors: 0, kernel_tasks: 0, kernel_task_errors: 0 });
  }
  const rows = await usage.query({ tenantId, metrics: ['requests', 'request_errors', 'kernel_tasks', 'kernel_task_errors'], from: from.toISOString(), to: end.toISOString(), granularity: 'day' });
  for (const r of rows) {
    const d = map.get(r.period.slice(0, 10));
    if (d) d[r.metric as keyof Omit<Daily, 'day'>] += r.quantity;
  }
  return [...map.values()];
}

const activity = (d: Daily) => d.requests + d.kernel_tasks;
const sum = (xs: Daily[], f: (d: Daily) => number) => xs.reduce((a, d) => a + f(d), 0);

export interface Signals {
  age_days: number;
  plan: string;
  activity_7d: number;
  activity_prev_7d: number;
  trend: number | null;
  active_days_14d: number;
  last_active_day: string | null;
  error_rate_7d: number | null;
  plan_or_addon_changes_30d: number;
  kernels_used_30d: number;
  kernels_available: number;
}

export async function signals(db: Db, usage: UsageMeter, mesh: Mesh, tenant: { id: string; plan: string; created_at: string }, now: Date, days: Daily[]): Promise<Signals> {
  const last7 = days.slice(-7);
  const prev7 = days.slice(-14, -7);
  const a7 = sum(last7, activity);
  const p7 = sum(prev7, activity);
  const errors7 = sum(last7, (d) => d.request_errors + d.kernel_task_errors);
  const lastActive = [...days].reverse().find((d) => activity(d) > 0)?.day ?? null;
  const since30 = new Date(now.getTime() - 30 * DAY).toISOString();
  const changes = await db('actions').where({ target_type: 'tenant', target_id: tenant.id }).whereIn('action', ['assign_plan', 'subscribe_plan', 'add_addon']).andWhere('created_at', '>=', since30).count({ n: '*' });
  const kernels = await usage.query({ tenantId: tenant.id, metrics: ['kernel_tasks'], from: since30, to: now.toISOString(), granularity: 'total' });
  return {
    age_days: Math.floor((now.getTime() - Date.parse(tenant.created_at)) / DAY),
    plan: tenant.plan,
    activity_7d: a7,
    activity_prev_7d: p7,
    trend: p7 > 0 ? Math.round(((a7 - p7) / p7) * 1e4) / 1e4 : null,
    active_days_14d: days.slice(-14).filter((d) => activity(d) > 0).length,
    last_active_day: lastActive,
    error_rate_7d: a7 > 0 ? Math.round((errors7 / a7) * 1e6) / 1e6 : null,
    plan_or_addon_changes_30d: Number(changes[0]?.n ?? 0),
    kernels_used_30d: new Set(kernels.map((k) => k.dimension)).size,
    kernels_available: mesh.kernels().length,
  };
}

export const STAGE_RULES =
  'churned: no activity in 30 days and older than 30 days; onboarding: younger than 14 days; at_risk: no activity in 7 days, activity down by half against the 7 days before, or error rate over 5%; ' +
  'expanding: activity up 20% or a plan or add-on change in 30 days; active: otherwise';

export function stage(s: Signals, days: Daily[]): 'onboarding' | 'active' | 'expanding' | 'at_risk' | 'churned' {
  const active30 = sum(days.slice(-30), activity);
  if (s.age_days >= 30 && active30 === 0) return 'churned';
  if (s.age_days < 14) return 'onboarding';
  if (s.activity_7d === 0 || (s.trend !== null && s.trend <= -0.5) || (s.error_rate_7d ?? 0) > 0.05) return 'at_risk';
  if ((s.trend !== null && s.trend >= 0.2) || s.plan_or_addon_changes_30d > 0) return 'expanding';
  return 'active';
}

export const HEALTH_METHOD =
  'score = 0.30 activity (active days of the last 14) + 0.20 trend (50 + 50 x change against the 7 days before, clamped 0..100) + 0.25 reliability (100 - 1000 x error rate, clamped) ' +
  '+ 0.15 adoption (kernels used in 30 days / kernels available) + 0.10 billing (100 when nothing is owed, else 100 x paid share of what was billed in 90 days)';

/** The health score and its components, each 0..100. */
export async function health(s: Signals, billing: Billing, tenantId: string, now: Date) {
  const clamp = (x: number) => Math.max(0, Math.min(100, Math.round(x * 100) / 100));
  const balance = await billing.balance(tenantId);
  const owed = balance.minor;
  const since90 = new Date(now.getTime() - 90 * DAY).toISOString();
  const billed = (await billing.spend(tenantId, since90, now.toISOString())).minor;
  const components = {
    activity: clamp((s.active_days_14d / 14) * 100),
    trend: s.trend === null ? (s.activity_7d > 0 ? 100 : 0) : clamp(50 + 50 * s.trend),
    reliability: s.error_rate_7d === null ? 100 : clamp(100 - 1000 * s.error_rate_7d),
    adoption: s.kernels_available ? clamp((s.kernels_used_30d / s.kernels_available) * 100) : 0,
    billing: owed <= 0 ? 100 : clamp(billed > 0 ? (1 - Math.min(1, owed / billed)) * 100 : 0),
  };
  const score = clamp(0.3 * components.activity + 0.2 * components.trend + 0.25 * components.reliability + 0.15 * components.adoption + 0.1 * components.billing);
  return { score, components, owed: { amount: balance.amount, currency: balance.currency } };
}
