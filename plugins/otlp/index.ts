// OTLP/HTTP receiver: OpenTelemetry SDKs and Collectors export traces, metrics and logs to
// the service unchanged (POST {base}/otlp/v1/traces, ...; also /v1/... with rootPaths on).
import { HttpError, NotFound } from '../../core/errors';
import { definePlugin, provide, type RouteMaker } from '../../core/plugin';
import { core } from '../../core/services';
import type { Request, Response } from 'express';
import { decodeJson, decodeProtobuf, encodingOf, isProtobuf, readProtobufBody, responseJson, sendProtobuf, sendProtobufError } from './decode';
import { deps, gateRef, type Deps } from './deps';
import { Gate } from './gate';
import { otlpMigrations } from './migrations';
import type { Signal } from './proto';
import { receiveLogs, receiveMetrics, receiveTraces, type ReceiveContext } from './receive';
import { exportBodies, exportResponses, logsPage, logsQuery, pointsPage, pointsQuery, receiverState, seriesList } from './schemas';
import { listLogs, listPoints, listSeries } from './store';

const SIGNALS: Signal[] = ['traces', 'metrics', 'logs'];
const KEPT: Record<Signal, string> = {
  traces: 'Spans with gen_ai.* attributes (a provider and a model) become llm-call events, spans of the kernel tasks kernel events, every other span a span event; all keep their resource attributes and are deduplicated by trace and span id.',
  metrics: 'Points of gen_ai.* series (gen_ai.client.token.usage, gen_ai.client.operation.duration, ...) are stored; every other series is accepted and counted by name.',
  logs: 'Every log record is stored with its trace and span ids, deduplicated by content.',
};

async function exportSignal(signal: Signal, s: Deps, tenantId: string, req: Request, res: Response, body: unknown) {
  const encoding = encodingOf(req);
  const cfg = s.config.telemetry.otlpReceiver;
  return s.gate.run(async () => {
    const ctx: ReceiveContext = {
      db: s.db,
      sink: s.telemetry,
      tenantId,
      maxBatch: s.config.telemetry.maxBatch,
      retryAfter: cfg.retryAfterSeconds,
      onStoreError: (err) => s.log.error({ err, signal }, 'OTLP export not stored'),
    };
    let result;
    if (signal === 'traces') result = await receiveTraces(ctx, encoding === 'json' ? decodeJson('traces', body) : decodeProtobuf('traces', await readProtobufBody(req, cfg.maxBodyBytes)));
    else if (signal === 'metrics') result = await receiveMetrics(ctx, encoding === 'json' ? decodeJson('metrics', body) : decodeProtobuf('metrics', await readProtobufBody(req, cfg.maxBodyBytes)));
    else result = await receiveLogs(ctx, encoding === 'json' ? decodeJson('logs', body) : decodeProtobuf('logs', await readProtobufBody(req, cfg.maxBodyBytes)));
    if (encoding === 'protobuf') return sendProtobuf(res, signal, result);
    return responseJson(signal, result);
  });
}

function exportRoute(route: RouteMaker<Deps>, signal: Signal, root: boolean) {
  return route({
    method: 'post',
    path: root ? `/v1/${signal}` : `/otlp/v1/${signal}`,
    summary: root ? `OTLP/HTTP ${signal} export at the bare path (telemetry.otlpReceiver.rootPaths; 404 when off)` : `OTLP/HTTP ${signal} export (protobuf or JSON, gzip or not)`,
    description:
      `${KEPT[signal]} Content-Type application/x-protobuf or application/json, Content-Encoding gzip or none; the answer is in the ` +
      'encoding of the request (an empty body, or a partial success naming what was refused and why). 400 for a body that does not ' +
      'decode, 429 or 503 with Retry-After when the receiver is busy or the store fails (exporters retry those). A bearer token, ' +
      'or an ingest key (Authorization: Bearer pcik_..., X-API-Key or X-Ingest-Key).',
    access: 'member',
    documentedBody: exportBodies[signal],
    response: exportResponses[signal],
    errors: [400, 404, 413, 415, 503],
    handler: async ({ caller, services, req, res, body }) => {
      if (root && !services.config.telemetry.otlpReceiver.rootPaths) {
        throw new NotFound(`Not Found: POST /v1/${signal} (set telemetry.otlpReceiver.rootPaths to serve it; /otlp/v1/${signal} always is)`, 'ROUTE_NOT_FOUND');
      }
      try {
        return await exportSignal(signal, services, caller!.tenantId, req, res, body);
      } catch (err) {
        // The same encoding as the request, failures included (a request whose content type is
        // not one of the two gets the house JSON error).
        if (!(err instanceof HttpError) || res.headersSent || !isProtobuf(req)) throw err;
        sendProtobufError(res, err);
        return undefined;
      }
    },
  });
}

export default definePlugin({
  id: 'otlp',
  prefix: '',
  deps,
  provides: [
    provide(gateRef, {
      deps: { config: core.config, lifecycle: core.lifecycle },
      factory: ({ config, lifecycle }) => {
        const c = () => config.telemetry.otlpReceiver;
        return new Gate(() => c().maxConcurrent, () => c().retryAfterSeconds, () => lifecycle.state === 'stopping');
      },
    }),
  ],
  migrations: otlpMigrations,
  routes: (route) => [
    ...SIGNALS.map((s) => exportRoute(route, s, false)),
    ...SIGNALS.map((s) => exportRoute(route, s, true)),
    route({
      method: 'get',
      path: '/otlp/v1/receiver',
      summary: "This host's receiver: export requests in flight, its bound, and the requests told to back off (429) since start",
      access: 'operator',
      response: receiverState,
      handler: ({ services }) => {
        const g = services.gate;
        const c = services.config.telemetry.otlpReceiver;
        return { in_flight: g.inFlight, max_concurrent: c.maxConcurrent, throttled: g.throttled, retry_after_seconds: c.retryAfterSeconds, root_paths: c.rootPaths };
      },
    }),
    route({
      method: 'get',
      path: '/otlp/v1/query/metrics',
      summary: "Stored points of the GenAI metric series (the caller's tenant), newest first",
      access: 'viewer',
      query: pointsQuery,
      response: pointsPage,
      handler: ({ query, caller, services }) =>
        listPoints(services.db, caller!.tenantId, { ...query, since: query.since && new Date(query.since).toISOString(), until: query.until && new Date(query.until).toISOString() }),
    }),
    route({
      method: 'get',
      path: '/otlp/v1/query/metric-series',
      summary: 'Every metric series received, with its point count and whether its points are stored',
      access: 'viewer',
      response: seriesList,
      handler: async ({ caller, services }) => ({ series: await listSeries(services.db, caller!.tenantId) }),
    }),
    route({
      method: 'get',
      path: '/otlp/v1/query/logs',
      summary: 'Stored log records, newest first; with trace_id, the records of one trace, oldest first',
      access: 'viewer',
      query: logsQuery,
      response: logsPage,
      handler: ({ query, caller, services }) =>
        listLogs(services.db, caller!.tenantId, {
          ...query,
          trace_id: query.trace_id?.toLowerCase(),
          since: query.since && new Date(query.since).toISOString(),
          until: query.until && new Date(query.until).toISOString(),
        }),
    }),
  ],
});
