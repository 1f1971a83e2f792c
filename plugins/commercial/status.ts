import { z } from 'zod';
import { NotFound } from '../../core/errors';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { namedTenantScope } from '../../core/tenancy';
import type { Deps } from './index';
import { incidentsOf, serviceLevel } from './measures';

const tenantParams = z.object({ tenant_id: z.string().min(1).max(64) });
const level = z.object({ requests: z.number(), request_errors: z.number(), kernel_tasks: z.number(), kernel_task_errors: z.number(), availability: z.number().nullable(), error_rate: z.number().nullable(), latency_p95_ms: z.number().nullable() });
const kernelState = z.object({ kernel: z.string(), state: z.string(), health: z.string(), breaker: z.string() });

/** A kernel as a status page says it: operational, degraded or outage. */
function componentStatus(k: { health: string; state: string; breaker: { state: string } }): 'operational' | 'degraded' | 'outage' {
  if (k.breaker.state === 'open' || k.health === 'unhealthy' || k.state === 'drained') return 'outage';
  if (k.health === 'degraded' || k.breaker.state === 'half_open' || k.state !== 'active') return 'degraded';
  return 'operational';
}

async function tenantExists(d: Deps, id: string): Promise<void> {
  if (!(await d.db('tenants').where({ id }).first('id'))) throw new NotFound('Tenant not found');
}

export function statusRoutes(route: RouteMaker<Deps>): RouteDef[] {
  return [
    route({
      method: 'get',
      path: '/commercial/production/health/{tenant_id}',
      summary: "A tenant's production health now: its error rate and latency over the last minutes, the kernels' breakers and health, its open incidents",
      access: 'viewer',
      params: tenantParams,
      query: z.object({ window_minutes: z.coerce.number().int().min(60).max(10_080).default(60) }),
      response: z.object({ tenant_id: z.string(), status: z.enum(['healthy', 'degraded', 'unhealthy']), reasons: z.array(z.string()), service: level, kernels: z.array(kernelState), open_incidents: z.number().int(), incidents_by_severity: z.record(z.string(), z.number()), method: z.string(), window: z.object({ from: z.string(), to: z.string() }), inputs: z.array(z.string()) }),
      errors: [404, 422],
      handler: async ({ params, query, caller, services }) => {
        const scope = namedTenantScope(services.db, caller!, params.tenant_id);
        await tenantExists(services, scope.tenantId);
        const now = services.clock.now();
        const w = { from: new Date(now.getTime() - query.window_minutes * 60_000).toISOString(), to: now.toISOString() };
        const svc = await serviceLevel(services.usage, scope.tenantId, w.from, w.to);
        const inc = await incidentsOf(services.incidents, scope.tenantId, w.from, w.to);
        const kernels = services.mesh.kernels().map((k) => ({ kernel: k.id, state: k.state, health: k.health, breaker: k.breaker.state }));
        const reasons: string[] = [];
        let status: 'healthy' | 'degraded' | 'unhealthy' = 'healthy';
        const worse = (s: 'degraded' | 'unhealthy', why: string) => {
          reasons.push(why);
          if (s === 'unhealthy' || status === 'healthy') status = s;
        };
        if (svc.error_rate !== null && svc.error_rate > 0.05) worse('unhealthy', `error rate ${svc.error_rate} above 5%`);
        else if (svc.error_rate !== null && svc.error_rate > 0.01) worse('degraded', `error rate ${svc.error_rate} above 1%`);
        for (const k of kernels) if (k.breaker === 'open') worse('unhealthy', `kernel ${k.kernel} is isolated (breaker open)`);
        for (const k of kernels) if (k.health === 'degraded' || k.health === 'unhealthy') worse('degraded', `kernel ${k.kernel} is ${k.health}`);
        if ((inc.by_severity.critical ?? 0) > 0) worse('unhealthy', `${inc.by_severity.critical} critical incident(s) open`);
        else if (inc.open_now > 0) worse('degraded', `${inc.open_now} incident(s) open`);
        return {
          tenant_id: scope.tenantId, status, reasons, service: svc, kernels, open_incidents: inc.open_now, incidents_by_severity: inc.by_severity,
          method: 'unhealthy: error rate > 5%, an open breaker or a critical incident; degraded: error rate > 1%, a degraded kernel or an open incident',
          window: w, inputs: ['usage_counters', 'mesh kernels', 'incidents'],
        };
      },
    }),
    route({
      method: 'get',
      path: '/global/status',
      summary: 'Public status page data: each component (API, database, every kernel) and the open platform-wide incidents',
      access: 'public',
      response: z.object({
        status: z.enum(['operational', 'degraded', 'outage']),
        components: z.array(z.object({ name: z.string(), status: z.enum(['operational', 'degraded', 'outage']), detail: z.string() })),
        incidents: z.array(z.object({ id: z.string(), title: z.string(), severity: z.string(), state: z.string(), created_at: z.string() })),
        updated_at: z.string(),
      }),
      handler: async ({ services }) => {
        const components: Array<{ name: string; status: 'operational' | 'degraded' | 'outage'; detail: string }> = [];
        components.push({ name: 'api', status: services.lifecycle.state === 'running' ? 'operational' : 'degraded', detail: `host ${services.lifecycle.state}` });
        const t0 = performance.now();
        const dbOk = await services.db.raw('select 1').then(() => true, () => false);
        components.push({ name: 'database', status: dbOk ? 'operational' : 'outage', detail: dbOk ? `answered in ${Math.round((performance.now() - t0) * 100) / 100} ms` : 'no answer' });
        for (const k of services.mesh.kernels()) components.push({ name: `kernel:${k.id}`, status: componentStatus(k), detail: `${k.state}, ${k.health}, breaker ${k.breaker.state}` });
        // Only platform-wide incidents (no tenant): a tenant's incidents are its own business.
        const incidents = services.incidents
          ? (await services.incidents.list({ tenantId: null, active: true, limit: 50 })).map((i) => ({ id: i.id, title: i.title, severity: i.severity, state: i.state, created_at: i.created_at }))
          : [];
        const worst: 'outage' | 'degraded' | 'operational' = components.some((c) => c.status === 'outage') ? 'outage' : components.some((c) => c.status === 'degraded') || incidents.length ? 'degraded' : 'operational';
        return { status: worst, components, incidents, updated_at: services.clock.now().toISOString() };
      },
    }),
    route({
      method: 'get',
      path: '/pov/report/{tenant_id}',
      summary: "Proof of value of a tenant so far: what it ran since it joined, how reliably, and what it cost (no POV deployments exist until spec 4.20 is served)",
      access: 'viewer',
      params: tenantParams,
      response: z.object({
        tenant_id: z.string(), since: z.string(), pov_deployments: z.array(z.unknown()), pov_note: z.string(), service: level,
        workflows: z.object({ executions: z.number().int(), succeeded: z.number().int() }), spend: z.object({ amount: z.string(), currency: z.string() }),
        method: z.string(), window: z.object({ from: z.string(), to: z.string() }), inputs: z.array(z.string()),
      }),
      errors: [404],
      handler: async ({ params, caller, services }) => {
        const scope = namedTenantScope(services.db, caller!, params.tenant_id);
        const t = await services.db('tenants').where({ id: scope.tenantId }).first('created_at');
        if (!t) throw new NotFound('Tenant not found');
        const now = services.clock.now().toISOString();
        const w = { from: t.created_at as string, to: now };
        let executions = 0;
        let succeeded = 0;
        if (await services.db.schema.hasTable('workflow_executions')) {
          const rows = await scope.select('workflow_executions').groupBy('state').select('state').count({ n: '*' });
          for (const r of rows) {
            executions += Number(r.n);
            if (r.state === 'succeeded') succeeded += Number(r.n);
          }
        }
        const spend = await services.billing.spend(scope.tenantId, w.from, w.to);
        return {
          tenant_id: scope.tenantId, since: w.from, pov_deployments: [], pov_note: 'No proof-of-value deployment exists: the onboarding/pov endpoints (spec 4.20) are not served yet; the figures are the tenant\'s own use since it joined.',
          service: await serviceLevel(services.usage, scope.tenantId, w.from, w.to), workflows: { executions, succeeded }, spend: { amount: spend.amount, currency: spend.currency },
          method: 'metered requests and tasks since the tenant was created; workflow executions by state; spend from the ledger and the open invoice', window: w, inputs: ['usage_counters', 'workflow_executions', 'ledger_entries'],
        };
      },
    }),
  ];
}
