import { z } from 'zod';
import { Unavailable } from '../../core/errors';
import { timed } from '../../core/health';
import { definePlugin, provide, type RouteMaker } from '../../core/plugin';
import { core } from '../../core/services';
import { deps, type Deps } from './deps';
import { EVENT_TYPES, scopeTenant, telemetryStoreRef, type EventType } from '../../core/contracts/telemetry';
import { EVENT_SPECS } from './store/events';
import { specSchema } from './store/validate';
import { TelemetryEvents, telemetryMigrations } from './store';
import { eventStoreRef } from './store/ref';
import { keyMigrations, keyRoutes, registerAuthenticator } from './keys';
import { queryRoutes } from './query';
import { pipelineFigures, pipelineFiguresSchema } from './figures';

const issue = z.object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() });
const ingestResponse = z.object({
  accepted: z.number().int(),
  duplicates: z.number().int(),
  rejected: z.array(z.object({ index: z.number().int(), detail: z.array(issue) })),
  ids: z.array(z.string().nullable()),
});

const DESCRIPTIONS: Record<EventType, string> = {
  'llm-call': 'An LLM call (OpenTelemetry GenAI conventions): provider, request_model, duration_ms required; response_model, input_tokens, output_tokens, cost_usd, finish_reasons, operation, error_type optional.',
  kernel: 'A kernel task: kernel, task, duration_ms required; node, queue_ms optional.',
  policy: 'A policy decision: policy_id, decision required; subject, reason, duration_ms optional.',
  outcome: 'An outcome: name, result (success, failure, partial, unknown) required; value, unit optional.',
  evaluation: 'An evaluation: metric, score required; evaluator, model, passed, threshold optional.',
  span: 'Any other span of a trace (what the OTLP receiver stores for spans that are not LLM calls or kernel tasks): trace_id, span_id, name, duration_ms required; span_kind, service, scope, status_message optional.',
};

/**
 * The body of an ingest route: one event or a batch. The handler checks events with the fast
 * rule table; the schema shown in the OpenAPI document is generated from that same table,
 * and the pipeline itself only checks that the body is a JSON object.
 */
function ingestBody(type: EventType) {
  const event = specSchema(EVENT_SPECS[type].spec);
  const batch = {
    type: 'object',
    properties: { events: { type: 'array', minItems: 1, items: event, description: 'At most telemetry.maxBatch events (413 above)' } },
    required: ['events'],
    additionalProperties: false,
  };
  return z
    .custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), 'Input should be a valid dictionary')
    .meta({ oneOf: [event, batch] });
}

function ingestRoute(route: RouteMaker<Deps>, type: EventType) {
  return route({
    method: 'post',
    path: `/v1/ingest/${type}`,
    summary: `Ingest ${type} telemetry: one event, or {events: [...]} (at most telemetry.maxBatch)`,
    description:
      `${DESCRIPTIONS[type]} Every event may carry id, trace_id (32 hex), span_id (16 hex), parent_span_id, timestamp, ` +
      'status, error_type, kernel, attributes and resource (the emitter\'s resource attributes). A repeated id is stored once (counted in duplicates). Invalid events of a batch ' +
      'are reported by index; the rest is stored in one transaction before the answer. Bearer token or ingest key (X-Ingest-Key).',
    access: 'member',
    body: ingestBody(type),
    response: ingestResponse,
    status: 202,
    errors: [413],
    handler: async ({ body, caller, services }) => services.telemetryStore.ingest(type, caller!.tenantId, body),
  });
}

export default definePlugin({
  id: 'observability',
  prefix: '/observability',
  deps,
  provides: [
    provide(eventStoreRef, {
      deps: { config: core.config, db: core.db, telemetry: core.telemetry },
      factory: (d) => new TelemetryEvents(d.config, d.db, d.telemetry),
    }),
    provide(telemetryStoreRef, { deps: { events: eventStoreRef }, factory: ({ events }) => events }),
  ],
  migrations: [...keyMigrations, ...telemetryMigrations],
  start(services) {
    registerAuthenticator(services);
    // Ingest keys appear in the tenant security report's key review, when security runs.
    services.sec?.addKeySource({
      name: 'ingest_keys',
      list: (tenantId) => services.db('ingest_keys').where({ tenant_id: tenantId }).whereNull('revoked_at').select('id', 'name', 'created_at', 'last_used_at'),
    });
  },
  routes: (route) => [
    ...EVENT_TYPES.map((type) => ingestRoute(route, type)),
    ...queryRoutes(route),
    ...keyRoutes(route),
    route({
      method: 'get',
      path: '/metrics',
      summary: "The pipeline's own figures: accepted, duplicates, rejected, stored events and storage size",
      access: 'viewer',
      query: z.object({ tenant_id: z.string().min(1).max(64).optional() }),
      response: pipelineFiguresSchema,
      errors: [403],
      handler: async ({ query, caller, services }) => pipelineFigures(services, scopeTenant(caller!, query.tenant_id), caller!),
    }),
    route({
      method: 'get',
      path: '/health/live',
      summary: 'Liveness: the process answers',
      access: 'public',
      response: z.object({ status: z.literal('alive'), uptime_s: z.number() }),
      handler: () => ({ status: 'alive' as const, uptime_s: Math.round(process.uptime()) }),
    }),
    route({
      method: 'get',
      path: '/health/ready',
      summary: 'Readiness: database reachable, plugins started, not shutting down (503 otherwise)',
      access: 'public',
      response: z.object({ status: z.literal('ready'), state: z.string(), database: z.object({ ok: z.boolean(), latency_ms: z.number().nullable() }), plugins_started: z.array(z.string()) }),
      errors: [503],
      handler: async ({ services }) => {
        const { lifecycle, db } = services;
        let database: { ok: boolean; latency_ms: number | null; error?: string };
        try {
          const { ms } = await timed(() =>
            Promise.race([db.raw('select 1'), new Promise((_, reject) => setTimeout(() => reject(new Error('no answer within 2000 ms')), 2000).unref())]),
          );
          database = { ok: true, latency_ms: ms };
        } catch (err) {
          database = { ok: false, latency_ms: null, error: (err as Error).message };
        }
        const body = { state: lifecycle.state, database, plugins_started: [...lifecycle.startedPlugins] };
        if (!database.ok || !lifecycle.ready) throw new Unavailable({ status: 'not_ready', ...body });
        return { status: 'ready' as const, ...body, database: { ok: true, latency_ms: database.latency_ms } };
      },
    }),
  ],
});
