import { z } from 'zod';
import { selfUrl } from '../../core/http/loopback';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { startBenchmarks, trends } from './benchmarks';
import type { Deps } from './deps';
import { check, envelope } from './reliability';
import { emptyBody, json, limitQuery, run } from './schemas';
import { scenario, stressBody } from './stress';
import { RUN_STATES } from './store';

/** Stress tests, benchmarks and the reliability envelope measured from them. */
export const loadRoutes = (route: RouteMaker<Deps>): RouteDef<Deps>[] => [
  route({
    method: 'post',
    path: '/stability/stress_test',
    summary: 'Start a stress test: bounded real load (rate, duration, concurrency) from a worker over loopback HTTP at a kernel task or a GET route',
    description: 'Give a stored scenario_id, or a target with rate_per_second (≤200), duration_seconds (≤60) and concurrency (≤32). 409 CHAOS_ACTIVE while a chaos experiment runs, STRESS_TEST_RUNNING while another test runs.',
    access: 'operator',
    body: stressBody,
    response: run,
    status: 202,
    errors: [404, 409, 422],
    handler: async ({ body, caller, req, services }) => {
      const r = await services.stability.stress.start(body, caller!, selfUrl(req));
      await services.actions.record({ source: 'manual', actor: caller!.id, action: 'start_stress_test', target_type: 'stress_test', target_id: r.id, result: 'succeeded', detail: r.definition, tenant_id: caller!.tenantId });
      return r;
    },
  }),
  route({
    method: 'get',
    path: '/stability/stress_test/scenarios',
    summary: 'Stored stress test scenarios',
    access: 'viewer',
    response: z.object({ scenarios: z.array(scenario), next_cursor: z.null() }),
    handler: async ({ services }) => ({ scenarios: await services.stability.stress.scenarios(), next_cursor: null }),
  }),
  route({
    method: 'get',
    path: '/stability/stress_test/{test_id}',
    summary: "A stress test: state, throughput, latency percentiles, errors, and the mesh's queue depth, breaker trips and node health during it",
    access: 'viewer',
    params: z.object({ test_id: z.uuid() }),
    response: run,
    errors: [404],
    handler: ({ params, caller, services }) => services.stability.runs.get('stress_test', params.test_id, caller!.tenantId),
  }),
  route({
    method: 'post',
    path: '/stability/benchmarks/run',
    summary: 'Run the fixed suite of kernel and API micro-benchmarks (202; poll benchmarks/results)',
    access: 'operator',
    body: emptyBody,
    response: run,
    status: 202,
    handler: async ({ caller, req, services }) => {
      const r = await startBenchmarks(services, services.stability.runs, caller!, selfUrl(req));
      await services.actions.record({ source: 'manual', actor: caller!.id, action: 'run_benchmarks', target_type: 'benchmark', target_id: r.id, result: 'succeeded', tenant_id: caller!.tenantId });
      return r;
    },
  }),
  route({
    method: 'get',
    path: '/stability/benchmarks/results',
    summary: 'Benchmark runs, newest first, each with every benchmark measured (platform-wide)',
    access: 'viewer',
    query: limitQuery.extend({ state: z.enum(RUN_STATES).optional() }),
    response: z.object({ runs: z.array(run), next_cursor: z.null() }),
    errors: [422],
    handler: async ({ query, services }) => ({ runs: await services.stability.runs.list('benchmark', null, query.limit, query.state), next_cursor: null }),
  }),
  route({
    method: 'get',
    path: '/stability/benchmarks/trends',
    summary: 'Per benchmark, its median latency over the runs and a regression flag against the baseline of earlier runs',
    access: 'viewer',
    query: z.object({ runs: z.coerce.number().int().min(2).max(100).default(30) }),
    response: z.object({ benchmarks: z.array(json), method: z.string(), runs: z.number().int() }),
    errors: [422],
    handler: async ({ query, services }) => {
      const list = await services.stability.runs.list('benchmark', null, query.runs, 'succeeded');
      return { benchmarks: trends(list), runs: list.length, method: 'baseline = mean of the p50 of up to 10 earlier runs; regression when the latest p50 exceeds it by more than 3 standard deviations and more than 20 %; fewer than 3 earlier runs: regression is null' };
    },
  }),
  route({
    method: 'get',
    path: '/stability/reliability/envelope',
    summary: 'Per kernel, the highest throughput at which it met its SLO and the lowest at which it did not, measured by stress tests',
    access: 'viewer',
    response: z.object({ kernels: z.array(json), method: z.string() }),
    handler: async ({ caller, services }) => ({ kernels: await envelope(services, caller!.tenantId), method: 'succeeded stress tests of each kernel; SLO = the kernel manifest p95 latency and error rate' }),
  }),
  route({
    method: 'post',
    path: '/stability/reliability/check',
    summary: "Each kernel's current load (task outcomes over a window) against its measured envelope: within, near (over 80 %), over, or unknown",
    access: 'viewer',
    body: z.object({ window_seconds: z.number().int().min(10).max(3600).default(60) }).default({ window_seconds: 60 }),
    response: z.object({ kernels: z.array(json), window_seconds: z.number().int(), method: z.string() }),
    errors: [422],
    handler: async ({ body, caller, services }) => ({ kernels: await check(services, caller!.tenantId, body.window_seconds), window_seconds: body.window_seconds, method: 'task rate = outcomes in the window / window length; compared with the envelope throughput' }),
  }),
];
