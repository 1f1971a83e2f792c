import { z } from 'zod';
import { actionRecordSchema } from '../../core/actions';
import { definePlugin } from '../../core/plugin';
import { core } from '../../core/services';
import { checkedWindow, llmMetricsSchema, scopeTenant, telemetryStoreRef, windowMetrics } from '../../core/contracts/telemetry';
import { hostFigures, hostSchema } from './host';

// The operator's side of the telemetry store (/ops/observability/*): the same aggregates as
// the query API, the ingest pipeline's figures, the host's own kernel and HTTP telemetry,
// and the audit log of control actions and admin changes.

const iso = z.iso.datetime({ offset: true });
const tenant = z.string().min(1).max(64).optional().describe('Another tenant (admins only)');
const actionSchema = actionRecordSchema;

export default definePlugin({
  id: 'ops-observability',
  prefix: '/ops/observability',
  deps: { db: core.db, telemetry: core.telemetry, telemetryStore: telemetryStoreRef, actions: core.actions, health: core.health },
  routes: (route) => [
    route({
      method: 'get',
      path: '/overview',
      summary: 'Events per type in the window, ingest figures, LLM totals, and the host\'s own kernel and HTTP telemetry',
      access: 'operator',
      query: z.object({ since: iso.optional(), until: iso.optional(), tenant_id: tenant }),
      response: z.object({
        window: z.object({ tenant_id: z.string(), since: z.string(), until: z.string() }),
        events_by_type: z.record(z.string(), z.number()),
        ingest: z.object({ scope: z.enum(['tenant', 'platform']), accepted: z.number(), duplicates: z.number(), rejected: z.number(), batches: z.number() }),
        llm: llmMetricsSchema.shape.totals,
        host: hostSchema,
      }),
      errors: [403],
      handler: async ({ query, caller, services }) => {
        const w = checkedWindow(query, scopeTenant(caller!, query.tenant_id));
        const store = services.telemetryStore;
        // Admins see the whole platform's ingest; operators their tenant's.
        const platform = caller!.kind === 'user' && caller!.role === 'admin' && !query.tenant_id;
        const stats = await store.stats(platform ? null : w.tenantId);
        const sum = (k: 'accepted' | 'duplicates' | 'rejected' | 'batches') => stats.reduce((a, s) => a + s[k], 0);
        const llm = await store.llmMetrics(w, []);
        return {
          window: { tenant_id: w.tenantId, since: w.since, until: w.until },
          events_by_type: await store.countsByType(w),
          ingest: { scope: platform ? ('platform' as const) : ('tenant' as const), accepted: sum('accepted'), duplicates: sum('duplicates'), rejected: sum('rejected'), batches: sum('batches') },
          llm: llm.totals,
          host: await hostFigures(services),
        };
      },
    }),
    route({
      method: 'get',
      path: '/llm-metrics',
      summary: 'LLM call aggregates (as /observability/v1/query/metrics/llm-calls)',
      access: 'operator',
      ...windowMetrics.llmCalls(),
    }),
    route({
      method: 'get',
      path: '/policy-metrics',
      summary: 'Policy decision aggregates (as /observability/v1/query/metrics/policy-decisions)',
      access: 'operator',
      ...windowMetrics.policyDecisions(),
    }),
    route({
      method: 'get',
      path: '/outcome-metrics',
      summary: 'Outcome aggregates (as /observability/v1/query/metrics/outcomes)',
      access: 'operator',
      ...windowMetrics.outcomes(),
    }),
    route({
      method: 'get',
      path: '/audit',
      summary: 'Audit log: every control action (manual and automated) and admin change, newest first',
      description: 'Admins see every tenant (or the one named by tenant_id); operators see their tenant and platform-wide actions.',
      access: 'operator',
      query: z.object({
        source: z.enum(['manual', 'automated']).optional(),
        action: z.string().max(64).optional(),
        actor: z.string().max(128).optional(),
        target_type: z.string().max(32).optional(),
        target_id: z.string().max(128).optional(),
        since: iso.optional(),
        until: iso.optional(),
        tenant_id: tenant,
        limit: z.coerce.number().int().min(1).max(500).default(100),
        cursor: z.string().max(512).optional(),
      }),
      response: z.object({ entries: z.array(actionSchema), next_cursor: z.string().nullable() }),
      errors: [403],
      handler: async ({ query, caller, services }) => {
        const admin = caller!.kind === 'user' && caller!.role === 'admin';
        const tenantId = query.tenant_id ? scopeTenant(caller!, query.tenant_id) : undefined;
        const norm = (s?: string) => (s ? new Date(s).toISOString() : undefined);
        const page = await services.actions.list({
          source: query.source,
          action: query.action,
          actor: query.actor,
          target_type: query.target_type,
          target_id: query.target_id,
          since: norm(query.since),
          until: norm(query.until),
          scope: admin && !tenantId ? undefined : { tenant_id: tenantId ?? caller!.tenantId, platform: true },
          limit: query.limit,
          cursor: query.cursor,
        });
        return { entries: page.actions, next_cursor: page.next_cursor };
      },
    }),
  ],
});
