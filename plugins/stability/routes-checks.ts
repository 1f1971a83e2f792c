import crypto from 'node:crypto';
import { z } from 'zod';
import { bearerOf, selfUrl } from '../../core/http/loopback';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { consistencyReport } from './consistency';
import type { Deps } from './deps';
import { analysisChain, analyze, failureBody } from './failure';
import { CHECKS, validate } from './hardening';
import { score } from './observability';
import { readiness } from './readiness';
import { analysis, check, emptyBody, json, limitQuery, run } from './schemas';

/** Hardening, failure analysis, consistency, observability, isolation and the launch roll-up. */
export const checkRoutes = (route: RouteMaker<Deps>): RouteDef<Deps>[] => [
  route({
    method: 'get',
    path: '/stability/hardening/checklist',
    summary: 'The hardening checks of this deployment, each with its latest validated status and evidence',
    access: 'operator',
    response: z.object({ checks: z.array(z.object({ id: z.string(), title: z.string(), status: z.enum(['pass', 'fail', 'warn', 'not_validated']), evidence: json.nullable(), remedy: z.string().nullable() })), validated_at: z.string().nullable() }),
    handler: async ({ services }) => {
      const last = await services.db('stability_checks').where({ kind: 'hardening' }).orderBy('created_at', 'desc').first();
      const results = last ? (JSON.parse(last.result) as Array<z.output<typeof check>>) : [];
      return { checks: CHECKS.map((c) => results.find((r) => r.id === c.id) ?? { ...c, status: 'not_validated' as const, evidence: null, remedy: 'POST /stability/hardening/validate' }), validated_at: last?.created_at ?? null };
    },
  }),
  route({
    method: 'post',
    path: '/stability/hardening/validate',
    summary: 'Run every hardening check now (configuration, the admin account, real answers of this host) and store the result',
    access: 'operator',
    body: emptyBody,
    response: z.object({ checks: z.array(check), passed: z.number().int(), failed: z.number().int(), warnings: z.number().int(), validated_at: z.string() }),
    handler: async ({ caller, req, services }) => {
      const viaHttps = req.secure || String(req.headers['x-forwarded-proto'] ?? '').split(',')[0]!.trim() === 'https';
      const checks = await validate(services, selfUrl(req), bearerOf(req)!, viaHttps);
      const at = new Date().toISOString();
      await services.db('stability_checks').insert({ id: crypto.randomUUID(), kind: 'hardening', result: JSON.stringify(checks), created_by: caller!.id, created_at: at });
      const count = (s: string) => checks.filter((c) => c.status === s).length;
      await services.actions.record({ source: 'manual', actor: caller!.id, action: 'validate_hardening', target_type: 'deployment', target_id: 'hardening', result: 'succeeded', detail: { failed: count('fail'), warnings: count('warn') }, tenant_id: caller!.tenantId });
      return { checks, passed: count('pass'), failed: count('fail'), warnings: count('warn'), validated_at: at };
    },
  }),
  route({
    method: 'post',
    path: '/stability/failure/analyze',
    summary: 'The causal chain of a failed task, workflow execution or incident, from task outcomes, health changes, actions and chaos experiments',
    access: 'viewer',
    body: failureBody,
    response: z.object({
      subject: z.object({ kind: z.string(), id: z.string(), failed: z.boolean() }),
      kernel_id: z.string().nullable(),
      node_id: z.string().nullable(),
      chain: z.array(z.object({ at: z.string(), kind: z.string(), summary: z.string(), evidence: json })),
      first_suspect: json.nullable(),
      insight_chain_id: z.string().nullable().describe('The analysis recorded as an insight chain of agent failure-analysis (GET /agi/insight_chains/{id}); null without the agi plugin'),
      ...analysis,
    }),
    errors: [404, 422],
    handler: async ({ body, caller, req, services }) => {
      const a = await analyze(services.db, caller!, body, selfUrl(req), bearerOf(req)!);
      const chain = services.insights ? await services.insights.record(analysisChain(a, caller!, new Date().toISOString())) : null;
      return { ...a.report, first_suspect: a.report.first_suspect as unknown as Record<string, unknown> | null, insight_chain_id: chain?.id ?? null };
    },
  }),
  route({
    method: 'get',
    path: '/stability/consistency/report',
    summary: 'Integrity checks of the stores: orphans, states that must agree, index completeness (all tenants: admin)',
    access: 'admin',
    response: z.object({ checked_at: z.string(), consistent: z.boolean(), violations: z.number().int(), checks: z.array(json), method: z.string() }),
    handler: ({ services }) => consistencyReport(services.db),
  }),
  route({
    method: 'get',
    path: '/stability/observability/score',
    summary: 'How well each kernel is observed (traces, metrics, SLO, alerts, heartbeats) and the changes that would raise the score',
    access: 'viewer',
    response: z.object({ overall: z.number().int(), kernels: z.array(json), ...analysis }),
    handler: ({ caller, services }) => score(services, caller!.tenantId),
  }),
  route({
    method: 'post',
    path: '/stability/observability/update',
    summary: "Measure the observability score now and store it; answers the change since the tenant's previous measurement",
    access: 'member',
    body: emptyBody,
    response: z.object({ overall: z.number().int(), kernels: z.array(json), previous: z.object({ overall: z.number().int(), at: z.string() }).nullable(), change: z.number().int().nullable(), measured_at: z.string(), ...analysis }),
    handler: async ({ caller, services }) => {
      const now = await score(services, caller!.tenantId);
      const kind = `observability:${caller!.tenantId}`;
      const prev = await services.db('stability_checks').where({ kind }).orderBy('created_at', 'desc').first();
      const at = new Date().toISOString();
      await services.db('stability_checks').insert({ id: crypto.randomUUID(), kind: kind.slice(0, 32), result: JSON.stringify({ overall: now.overall }), created_by: caller!.id, created_at: at });
      await services.actions.record({ source: 'manual', actor: caller!.id, action: 'measure_observability', target_type: 'tenant', target_id: caller!.tenantId, result: 'succeeded', detail: { overall: now.overall }, tenant_id: caller!.tenantId });
      const previous = prev ? { overall: JSON.parse(prev.result).overall as number, at: prev.created_at as string } : null;
      return { ...now, previous, change: previous ? now.overall - previous.overall : null, measured_at: at };
    },
  }),
  route({
    method: 'get',
    path: '/stability/tenant_isolation_test',
    summary: 'Attack simulations of the tenant isolation: one report with every attempt (simulation_id), or the latest runs',
    access: 'operator',
    query: limitQuery.extend({ simulation_id: z.uuid().optional() }),
    response: z.object({ simulations: z.array(run), next_cursor: z.null() }),
    errors: [404, 422],
    handler: async ({ query, caller, services }) => {
      if (query.simulation_id) return { simulations: [await services.stability.runs.get('attack_simulation', query.simulation_id, caller!.tenantId)], next_cursor: null };
      const list = await services.stability.runs.list('attack_simulation', caller!.tenantId, query.limit);
      // The list shows each report without its attempts; ask by simulation_id for them.
      return { simulations: list.map((r) => (r.result ? { ...r, result: { ...r.result, attempts: undefined, findings: (r.result.findings ?? []).slice(0, 20) } } : r)), next_cursor: null };
    },
  }),
  route({
    method: 'post',
    path: '/stability/tenant_isolation/attack_simulation',
    summary: 'Make two scratch tenants and try every route of this host with the other tenant’s ids, tokens and paths (BOLA, BFLA, forged tokens, id guessing); 202, poll tenant_isolation_test',
    access: 'admin',
    body: emptyBody,
    response: run,
    status: 202,
    errors: [409],
    handler: async ({ caller, req, services }) => {
      const r = await services.stability.simulate(caller!, selfUrl(req));
      await services.actions.record({ source: 'manual', actor: caller!.id, action: 'run_attack_simulation', target_type: 'attack_simulation', target_id: r.id, result: 'succeeded', tenant_id: caller!.tenantId });
      return r;
    },
  }),
  route({
    method: 'get',
    path: '/launch/readiness_report',
    summary: 'Go/no-go: readiness, hardening, tenant isolation, SLOs and open incidents, each gate with its evidence (platform-wide: admin)',
    access: 'admin',
    response: z.object({ decision: z.enum(['go', 'no_go']), blockers: z.array(z.string()), gates: z.array(z.object({ id: z.string(), status: z.enum(['pass', 'fail', 'unknown']), detail: json })), ...analysis }),
    handler: ({ services }) => readiness(services),
  }),
];
