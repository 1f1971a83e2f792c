import type { IncidentReads } from '../../core/contracts/incidents';
import type { UsageMeter } from '../../core/contracts/usage';

// What the commercial reports measure about a tenant, from metered usage and the incident log.

export interface Service {
  requests: number;
  request_errors: number;
  kernel_tasks: number;
  kernel_task_errors: number;
  /** Successful share of requests and tasks together; null without any. */
  availability: number | null;
  error_rate: number | null;
  latency_p95_ms: number | null;
}

function ratio(a: number, b: number): number | null {
  return b > 0 ? Math.round((a / b) * 1e6) / 1e6 : null;
}

export async function serviceLevel(usage: UsageMeter, tenantId: string, from: string, to: string): Promise<Service> {
  const rows = await usage.query({ tenantId, metrics: ['requests', 'request_errors', 'kernel_tasks', 'kernel_task_errors'], from, to, granularity: 'total' });
  const sum = (m: string) => rows.filter((r) => r.metric === m).reduce((a, r) => a + r.quantity, 0);
  const requests = sum('requests');
  const requestErrors = sum('request_errors');
  const tasks = sum('kernel_tasks');
  const taskErrors = sum('kernel_task_errors');
  const total = requests + tasks;
  const bad = requestErrors + taskErrors;
  const p95 = await usage.latencyPercentile(tenantId, from, to, 95);
  return {
    requests, request_errors: requestErrors, kernel_tasks: tasks, kernel_task_errors: taskErrors,
    availability: ratio(total - bad, total), error_rate: ratio(bad, total), latency_p95_ms: p95 === null ? null : Number.isFinite(p95) ? p95 : null,
  };
}

/** Incidents of the tenant in a window (from the incidents plugin, when it is loaded). */
export async function incidentsOf(incidents: IncidentReads | null, tenantId: string, from: string, to: string) {
  if (!incidents) return { available: false, opened: 0, open_now: 0, by_severity: {} as Record<string, number>, response_minutes: [] as number[] };
  const rows = await incidents.list({ tenantId, since: from, until: to });
  const open = await incidents.list({ tenantId, active: true });
  const bySeverity: Record<string, number> = {};
  for (const r of open) bySeverity[r.severity] = (bySeverity[r.severity] ?? 0) + 1;
  // Response: from opening to the first entry a person made (acknowledge, mitigate, resolve, note).
  const response: number[] = [];
  if (rows.length) {
    const firsts = await incidents.firstResponses(rows.map((r) => r.id));
    const opened = new Map(rows.map((r) => [r.id, r.created_at]));
    for (const f of firsts) response.push(Math.round(((Date.parse(f.at) - Date.parse(opened.get(f.incident_id)!)) / 60_000) * 100) / 100);
  }
  return { available: true, opened: rows.length, open_now: open.length, by_severity: bySeverity, response_minutes: response.sort((a, b) => a - b) };
}

export function median(xs: number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
