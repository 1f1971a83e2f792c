import { z } from 'zod';
import { invalid, NotFound } from '../../../core/errors';
import type { RouteDef, RouteMaker } from '../../../core/plugin';
import type { Deps } from '../deps';
import { readinessChecks, saveReport } from '../checks/readiness';
import { gated, jsonObject } from '../schemas';

const probeResult = z.object({ target: z.string(), kind: z.string(), ok: z.boolean(), latency_ms: z.number().nullable(), detail: jsonObject, checked_at: z.string() });
const check = z.object({ name: z.string(), ok: z.boolean(), evidence: z.string() });
const report = z.object({ id: z.string(), ready: z.boolean(), checks: z.array(check), created_by: z.string(), created_at: z.string() });
const lastRun = z.object({ at: z.string(), ok: z.boolean(), by: z.string(), trigger: z.enum(['cron', 'immediate']), summary: jsonObject });
const schedulerStatus = z.object({
  running: z.boolean(),
  runner: z.string().nullable(),
  lease_until: z.string().nullable(),
  this_host: z.string(),
  this_host_runs_jobs: z.boolean(),
  jobs: z.array(z.object({ name: z.string(), cron: z.string(), next_run: z.string().nullable(), last_run: lastRun.nullable() })),
});

const target = z.discriminatedUnion('kind', [
  z.object({ name: z.string().min(1).max(64), kind: z.literal('http'), url: z.url({ protocol: /^https?$/ }) }),
  z.object({ name: z.string().min(1).max(64), kind: z.enum(['tcp', 'tls']), host: z.string().min(1).max(253), port: z.number().int().min(1).max(65535) }),
  z.object({ name: z.string().min(1).max(64), kind: z.literal('kernel'), domain: z.string().min(1).max(64) }),
  z.object({ name: z.string().min(1).max(64), kind: z.enum(['database', 'redis']) }),
]);

export const checkRoutes = (route: RouteMaker<Deps>): RouteDef<Deps>[] => [
  route({
    ...gated,
    method: 'post',
    path: '/automation/health/check',
    summary: 'Run real probes now: the targets given, or the database, Redis, every kernel and automation.healthTargets',
    access: 'operator',
    body: z.object({ targets: z.array(target).min(1).max(50).optional() }),
    response: z.object({ healthy: z.boolean(), results: z.array(probeResult) }),
    errors: [422],
    handler: async ({ body, caller, services }) => {
      const a = services.automation;
      const kernels = new Set(services.mesh.kernels().map((k) => k.id));
      body.targets?.forEach((t, i) => {
        if (t.kind === 'kernel' && !kernels.has(t.domain)) throw invalidTarget(i, `Unknown kernel "${t.domain}"`);
      });
      const results = await a.probes.run(body.targets ?? a.probes.defaultTargets());
      await services.actions.record({ source: 'manual', actor: caller!.id, action: 'run_health_check', target_type: 'health_check', target_id: 'targets', result: 'succeeded', tenant_id: caller!.tenantId, detail: { targets: results.length, failing: results.filter((r) => !r.ok).map((r) => r.target) } });
      return { healthy: results.every((r) => r.ok), results };
    },
  }),
  route({
    ...gated,
    method: 'get',
    path: '/automation/health/status',
    summary: 'The latest probe result of every target checked so far',
    access: 'viewer',
    response: z.object({ healthy: z.boolean(), targets: z.array(probeResult) }),
    handler: async ({ services }) => {
      const targets = await services.automation.probes.latest();
      return { healthy: targets.every((t) => t.ok), targets };
    },
  }),
  route({
    ...gated,
    method: 'post',
    path: '/automation/readiness/validate',
    summary: 'Production readiness from live checks, each with its evidence (stored as a report)',
    access: 'operator',
    response: report,
    status: 201,
    handler: async ({ caller, services }) => {
      const a = services.automation;
      const checks = await readinessChecks(services.db, services.config, services.mesh, services.accounts, a.https.running);
      const r = await saveReport(services.db, checks, caller!.id);
      await services.actions.record({ source: 'manual', actor: caller!.id, action: 'validate_readiness', target_type: 'readiness', target_id: r.id, result: r.ready ? 'succeeded' : 'failed', tenant_id: caller!.tenantId, detail: { failing: checks.filter((c) => !c.ok).map((c) => c.name) } });
      return r;
    },
  }),
  route({
    ...gated,
    method: 'get',
    path: '/automation/readiness/report',
    summary: 'The latest readiness report (404 before the first validation)',
    access: 'viewer',
    response: report,
    errors: [404],
    handler: async ({ services }) => {
      const row = await services.db('automation_readiness').orderBy('created_at', 'desc').first();
      if (!row) throw notYet();
      return { id: row.id, ready: !!row.ready, checks: JSON.parse(row.checks), created_by: row.created_by, created_at: row.created_at };
    },
  }),
  route({
    ...gated,
    method: 'get',
    path: '/automation/monitoring/scheduler/status',
    summary: 'Whether the scheduler runs, which host holds its lease, each job with its cron, next and last run',
    access: 'viewer',
    response: schedulerStatus,
    handler: ({ services }) => services.automation.scheduler.status(),
  }),
  switchScheduler(route, true, 'Start the scheduler (persisted; one host runs the jobs)'),
  switchScheduler(route, false, 'Stop the scheduler on every host (persisted)'),
  route({
    ...gated,
    method: 'post',
    path: '/automation/monitoring/check/immediate',
    summary: "Run every scheduler job now on this host (health probes, HTTPS handshakes, due renewals), whatever the scheduler's state",
    access: 'operator',
    response: z.object({ ok: z.boolean(), runs: z.record(z.string(), lastRun) }),
    handler: async ({ caller, services }) => {
      const runs = await services.automation.scheduler.runAll();
      const ok = Object.values(runs).every((r) => r.ok);
      await services.actions.record({ source: 'manual', actor: caller!.id, action: 'run_checks_now', target_type: 'scheduler', target_id: 'main', result: ok ? 'succeeded' : 'failed', tenant_id: caller!.tenantId });
      return { ok, runs };
    },
  }),
];

const invalidTarget = (i: number, msg: string) => invalid(['body', 'targets', i, 'domain'], msg);
const notYet = () => new NotFound('No readiness report yet: POST /automation/readiness/validate first');

/** POST /automation/monitoring/scheduler/start|stop. */
function switchScheduler(route: RouteMaker<Deps>, on: boolean, summary: string): RouteDef<Deps> {
  return route({
    ...gated,
    method: 'post',
    path: `/automation/monitoring/scheduler/${on ? 'start' : 'stop'}`,
    summary,
    access: 'operator',
    response: schedulerStatus,
    handler: async ({ caller, services }) => {
      const s = services.automation.scheduler;
      await s.setRunning(on);
      await services.actions.record({ source: 'manual', actor: caller!.id, action: on ? 'start_scheduler' : 'stop_scheduler', target_type: 'scheduler', target_id: 'main', result: 'succeeded', tenant_id: caller!.tenantId });
      return s.status();
    },
  });
}
