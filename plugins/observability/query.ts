import { z } from 'zod';
import type { RouteMaker } from '../../core/plugin';
import type { Deps } from './deps';
import { EVENT_TYPES, scopeTenant, windowMetrics } from '../../core/contracts/telemetry';
import { fromRow } from './store/events';
import { traceSchema, traceTree } from './store/trace';

const iso = z.iso.datetime({ offset: true });
const tenant = z.string().min(1).max(64).optional().describe('Another tenant (admins only)');

export const queryRoutes = (route: RouteMaker<Deps>) => [
  route({
    method: 'get',
    path: '/v1/query/events',
    summary: 'Stored events, newest first, with filters and cursor pages',
    access: 'viewer',
    query: z.object({
      type: z.enum(EVENT_TYPES).optional(),
      since: iso.optional(),
      until: iso.optional(),
      trace_id: z.string().regex(/^[0-9a-fA-F]{32}$/).optional(),
      model: z.string().min(1).max(128).optional(),
      kernel: z.string().min(1).max(64).optional(),
      status: z.enum(['ok', 'error']).optional(),
      tenant_id: tenant,
      limit: z.coerce.number().int().min(1).max(500).default(100),
      cursor: z.string().max(512).optional(),
    }),
    response: z.object({ events: z.array(z.record(z.string(), z.unknown())), next_cursor: z.string().nullable() }),
    errors: [403],
    handler: async ({ query, caller, services }) => {
      const tenantId = scopeTenant(caller!, query.tenant_id);
      const norm = (s?: string) => (s ? new Date(s).toISOString() : undefined);
      const page = await services.events.store.list({
        tenantId,
        type: query.type,
        since: norm(query.since),
        until: norm(query.until),
        trace_id: query.trace_id?.toLowerCase(),
        model: query.model,
        kernel: query.kernel,
        status: query.status,
        limit: query.limit,
        cursor: query.cursor,
      });
      return { events: page.rows.map(fromRow), next_cursor: page.next_cursor };
    },
  }),
  route({
    method: 'get',
    path: '/v1/query/traces/{trace_id}',
    summary: 'One trace as a tree of spans (each with its children and duration)',
    access: 'viewer',
    params: z.object({ trace_id: z.string().regex(/^[0-9a-fA-F]{32}$/, '32 hex characters') }),
    query: z.object({ tenant_id: tenant }),
    response: traceSchema,
    errors: [403, 404],
    handler: async ({ params, query, caller, services }) => traceTree(services.events.store, scopeTenant(caller!, query.tenant_id), params.trace_id),
  }),
  route({
    method: 'get',
    path: '/v1/query/metrics/llm-calls',
    summary: 'LLM calls over a window: count, error rate, latency p50/p95/p99, tokens and cost (group_by model, provider, operation, status, kernel)',
    access: 'viewer',
    ...windowMetrics.llmCalls(),
  }),
  route({
    method: 'get',
    path: '/v1/query/metrics/policy-decisions',
    summary: 'Policy decisions over a window, by policy and decision (group_by policy, decision, kernel)',
    access: 'viewer',
    ...windowMetrics.policyDecisions(),
  }),
  route({
    method: 'get',
    path: '/v1/query/metrics/outcomes',
    summary: 'Outcomes over a window: counts by result, success rate, value percentiles (group_by name, result, kernel)',
    access: 'viewer',
    ...windowMetrics.outcomes(),
  }),
  route({
    method: 'get',
    path: '/v1/query/metrics/evaluations',
    summary: 'Evaluation scores over a window: avg, min, max, p50/p95/p99, pass rate (group_by metric, evaluator, model, kernel)',
    access: 'viewer',
    ...windowMetrics.evaluations(),
  }),
];
