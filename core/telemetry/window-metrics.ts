import type { z } from 'zod';
import type { Db } from '../db';
import type { Caller } from '../roles';
import type { Window } from './aggregates';
import type { EventType } from './events';
import { checkedWindow, scopeTenant, windowQuery } from './scope';
import {
  evaluationMetrics, evaluationMetricsSchema, llmMetrics, llmMetricsSchema, outcomeMetrics, outcomeMetricsSchema, parseGroups,
  policyMetrics, policyMetricsSchema,
} from './views';

// The window aggregates are served twice: by the query API (/observability/v1/query/metrics/*,
// viewers) and by the operator console (/ops/observability/*-metrics, operators). Both
// declare their routes with these parts, so that the query, the answer and the computation
// are one.

function metricsRoute<S extends z.ZodType>(kind: Exclude<EventType, 'kernel'>, response: S, compute: (db: Db, w: Window, groups: string[]) => Promise<z.input<S>>) {
  return {
    query: windowQuery,
    response,
    errors: [403],
    handler: ({ query, caller, services }: { query: z.output<typeof windowQuery>; caller: Caller | null; services: { db: Db } }) =>
      compute(services.db, checkedWindow(query, scopeTenant(caller!, query.tenant_id)), parseGroups(kind, query.group_by)),
  };
}

/** Route parts (query, response, errors, handler) of each window aggregate. */
export const windowMetrics = {
  llmCalls: () => metricsRoute('llm-call', llmMetricsSchema, llmMetrics),
  policyDecisions: () => metricsRoute('policy', policyMetricsSchema, policyMetrics),
  outcomes: () => metricsRoute('outcome', outcomeMetricsSchema, outcomeMetrics),
  evaluations: () => metricsRoute('evaluation', evaluationMetricsSchema, evaluationMetrics),
};
