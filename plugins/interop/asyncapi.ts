import { Parser } from '@asyncapi/parser';
import { z } from 'zod';
import { actionRecordSchema } from '../../core/actions';

const health = z.enum(['healthy', 'degraded', 'unhealthy', 'unknown']);
const run = z.object({ id: z.string(), tenant_id: z.string().nullable(), state: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']), previous: z.string().nullable(), error: z.string().nullable() });

/**
 * The messages of /ops/stream: every `{type, timestamp, data}` the hub relays or answers, with
 * the schema of its `data` as the publishers in core and the plugins build it.
 */
export const STREAM_MESSAGES: Record<string, { summary: string; data: z.ZodType }> = {
  snapshot: { summary: 'First message to a new client (and the answer to a snapshot request): the mesh overview and kernels', data: z.object({ overview: z.record(z.string(), z.unknown()), kernels: z.array(z.record(z.string(), z.unknown())) }) },
  health_update: { summary: 'A node or kernel changed health', data: z.object({ kernel_id: z.string(), node_id: z.string().nullable(), domain: z.string(), health, previous: health.nullable(), reason: z.string() }) },
  node_state: { summary: 'A node changed state (active, paused, draining, drained, removed)', data: z.object({ node_id: z.string(), kernel_id: z.string(), state: z.string(), previous: z.string().nullable(), aborted_tasks: z.number().int().optional() }) },
  kernel_state: { summary: "A kernel's overall state changed", data: z.object({ kernel_id: z.string(), state: z.string(), previous: z.string() }) },
  drain_progress: { summary: 'Progress of a draining node', data: z.object({ node_id: z.string(), in_flight: z.number().int(), completed: z.number().int(), progress: z.number(), overdue: z.boolean() }) },
  breaker_state: { summary: "A kernel's circuit breaker opened, half-opened or closed", data: z.object({ kernel_id: z.string(), state: z.string(), isolated: z.boolean() }) },
  incident: { summary: 'An incident was opened or changed', data: z.object({ change: z.string(), tenant_id: z.string().nullable(), incident: z.record(z.string(), z.unknown()), entry: z.record(z.string(), z.unknown()) }) },
  workflow_status: { summary: 'A workflow execution changed state', data: z.object({ execution_id: z.string(), workflow_id: z.string(), workflow_name: z.string(), tenant_id: z.string(), state: z.string(), previous: z.string().nullable(), error: z.string().nullable(), steps: z.array(z.object({ id: z.string(), state: z.string() })) }) },
  chaos_experiment: { summary: 'A chaos experiment moved a phase (started, injected, deviated, rolled_back, ended)', data: z.looseObject({ experiment_id: z.string(), scenario_id: z.string().nullable(), injection_type: z.string(), target_domains: z.array(z.string()), tenant_id: z.string(), phase: z.string() }) },
  action_taken: { summary: 'A control action was recorded (manual or automated)', data: actionRecordSchema },
  ...Object.fromEntries(
    (['stress_test', 'benchmark', 'attack_simulation'] as const).map((k) => [k, { summary: `A ${k.replace('_', ' ')} run moved state (queued, running, succeeded, failed, cancelled)`, data: run }]),
  ),
  security_finding: { summary: 'A critical finding (e.g. a tenant isolation leak found by the attack simulation); operators only', data: z.object({ id: z.string(), severity: z.string(), kind: z.string(), title: z.string(), source: z.string(), run_id: z.string(), tenant_id: z.null() }) },
  subscribed: { summary: 'Answer to subscribe: the types the client now receives', data: z.object({ types: z.array(z.string()) }) },
  pong: { summary: 'Answer to ping', data: z.object({}) },
  error: { summary: 'A client message could not be understood', data: z.object({ detail: z.string() }) },
};

const CLIENT_MESSAGES: Record<string, { summary: string; schema: z.ZodType }> = {
  subscribe: { summary: 'Receive only these event types ([] or ["*"] for all)', schema: z.object({ type: z.literal('subscribe'), types: z.array(z.string()).max(100) }) },
  ping: { summary: 'Ask for a pong', schema: z.object({ type: z.literal('ping') }) },
  snapshot_request: { summary: 'Ask for a fresh snapshot', schema: z.object({ type: z.literal('snapshot') }) },
};

const schemaOf = (s: z.ZodType) => {
  const out = z.toJSONSchema(s, { target: 'draft-7', io: 'output', unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
};

/** AsyncAPI 3.0 description of the WebSocket stream /ops/stream. */
export function buildAsyncApi(version: string, host: string): Record<string, unknown> {
  const messages: Record<string, unknown> = {};
  for (const [name, m] of Object.entries(STREAM_MESSAGES)) {
    messages[name] = {
      name,
      summary: m.summary,
      contentType: 'application/json',
      payload: schemaOf(z.object({ type: z.literal(name), timestamp: z.iso.datetime(), data: m.data })),
    };
  }
  for (const [name, m] of Object.entries(CLIENT_MESSAGES)) messages[name] = { name, summary: m.summary, contentType: 'application/json', payload: schemaOf(m.schema) };
  const ref = (names: string[]) => names.map((n) => ({ $ref: `#/channels/stream/messages/${n}` }));
  return {
    asyncapi: '3.0.0',
    info: { title: 'Platform Control stream', version, description: 'Live events of the platform: the hub relays the event bus to WebSocket clients, filtered to what the caller may see.' },
    defaultContentType: 'application/json',
    servers: { platform: { host, protocol: 'ws', pathname: '/ops/stream', description: 'Authenticate with the API JWT: query parameter token or an Authorization: Bearer header', security: [{ $ref: '#/components/securitySchemes/bearer' }] } },
    channels: { stream: { address: '/ops/stream', messages } },
    operations: {
      receiveEvents: { action: 'receive', channel: { $ref: '#/channels/stream' }, summary: 'Events and answers the hub sends', messages: ref(Object.keys(STREAM_MESSAGES)) },
      sendCommands: { action: 'send', channel: { $ref: '#/channels/stream' }, summary: 'Commands a client may send', messages: ref(Object.keys(CLIENT_MESSAGES)) },
    },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
  };
}

/** The parser's errors (severity 0); warnings and hints do not make a document invalid. */
export async function validateAsyncApi(doc: unknown): Promise<{ valid: boolean; errors: Array<{ message: string; path: string }> }> {
  const { diagnostics } = await new Parser().parse(JSON.stringify(doc));
  const errors = diagnostics.filter((d) => Number(d.severity) === 0).map((d) => ({ message: d.message, path: '/' + d.path.join('/') }));
  return { valid: errors.length === 0, errors };
}
