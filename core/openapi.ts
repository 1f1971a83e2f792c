import { z } from 'zod';
import type { RouteDef, SocketDef } from './plugin';

type Json = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
  delete out.$schema;
  return out;
}

function objectShape(schema: z.ZodType | undefined): Record<string, z.ZodType> {
  if (!schema) return {};
  const s = schema as unknown as { shape?: Record<string, z.ZodType> };
  return s.shape ?? {};
}

function parameters(route: RouteDef): Json[] {
  const out: Json[] = [];
  const pathNames = [...route.fullPath!.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  const pshape = objectShape(route.params);
  for (const name of pathNames) {
    out.push({ name, in: 'path', required: true, schema: pshape[name] ? jsonSchema(pshape[name], 'input') : { type: 'string' } });
  }
  for (const [name, prop] of Object.entries(objectShape(route.query))) {
    const required = !prop.safeParse(undefined).success;
    out.push({ name, in: 'query', required, schema: jsonSchema(prop, 'input'), ...(prop.description ? { description: prop.description } : {}) });
  }
  return out;
}

const ERROR_TEXT: Record<number, string> = {
  400: 'Malformed request (JSON, path encoding, or a rule of the operation)',
  401: 'Missing or invalid credentials',
  403: 'The caller lacks the role or plan feature this needs',
  404: 'Not found (or another tenant\'s)',
  409: 'The current state forbids this',
  413: 'Request body too large',
  415: 'Unsupported content encoding',
  422: 'Validation error',
  429: 'Rate limited (see Retry-After)',
  502: 'An outside system failed',
  503: 'Unavailable or not configured',
  504: 'An outside system or a task timed out',
};

/**
 * The error statuses of a route: those it declares, plus those the pipeline itself answers
 * (credentials and roles, validation, the body reader, path parameters, limits).
 */
export function errorStatuses(route: RouteDef): number[] {
  const errors = new Set(route.errors ?? []);
  if (route.params || route.query || route.body) errors.add(422);
  if (route.body) [400, 413, 415].forEach((s) => errors.add(s));
  // A path parameter names an object: malformed encoding is a 400, an unknown (or another
  // tenant's) object a 404.
  if (route.fullPath!.includes('{')) [400, 404].forEach((s) => errors.add(s));
  if (route.access !== 'public') [401, 429].forEach((s) => errors.add(s));
  if (route.limitByAddress) errors.add(429);
  if (route.access !== 'public' && route.access !== 'authenticated') errors.add(403);
  if (route.feature) errors.add(403);
  return [...errors].sort((a, b) => a - b);
}

function success(route: RouteDef): Json {
  const status = route.status ?? 200;
  if (status === 204) return { description: 'Done; no content' };
  if (route.produces) return { description: 'Success', content: { [route.produces]: { schema: { type: 'string' } } } };
  // A route without a response schema shows an empty one; test/core/openapi.test.ts refuses it.
  return { description: 'Success', content: { 'application/json': { schema: route.response ? jsonSchema(route.response, 'output') : {} } } };
}

function operation(route: RouteDef, tag: string): Json {
  const responses: Json = { [String(route.status ?? 200)]: success(route) };
  for (const code of errorStatuses(route)) {
    responses[String(code)] = {
      description: ERROR_TEXT[code] ?? 'Error',
      content: { 'application/json': { schema: { $ref: code === 422 ? '#/components/schemas/ValidationError' : '#/components/schemas/Error' } } },
    };
  }
  const op: Json = {
    operationId: `${route.method}_${route.fullPath!.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '')}`,
    summary: route.summary,
    tags: [tag],
    parameters: parameters(route),
    responses,
  };
  if (route.description) op.description = route.description;
  // Who may call it, for clients and for the isolation attack simulation (BFLA attempts).
  op['x-access'] = route.access;
  if (route.feature) op['x-feature'] = route.feature;
  // Public operations say so explicitly: no security requirement.
  op.security = route.access === 'public' ? [] : [{ bearer: [] }];
  const body = route.documentedBody ?? route.body;
  if (body) {
    const type = route.bodyType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
    op.requestBody = { required: true, content: { [type]: { schema: jsonSchema(body, 'input') } } };
  }
  return op;
}

/** A kernel's tasks, as the OpenAPI document lists them. */
export interface KernelTasks {
  domain: string;
  description: string;
  tasks: Record<string, { summary: string; input: z.ZodType; output: z.ZodType }>;
}

/** The generic task route: its path template, whose concrete paths document one task each. */
export const TASK_ROUTE = '/kernels/{domain}/tasks/{task}';

/** The component name of a task's input schema. */
const taskInputName = (domain: string, task: string) => `${domain}.${task}.input`;

/**
 * One operation per kernel task, at its concrete path (`/kernels/analytics/tasks/describe`),
 * with the task's own input and output schemas. The generic route serves them all; these
 * copies of it (same access and errors) tell a client what each task takes and gives. Each
 * input schema is a component, which the generic route's body lists too.
 */
function taskOperations(generic: RouteDef, kernels: KernelTasks[], components: Record<string, Json>): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const k of kernels) {
    for (const [name, t] of Object.entries(k.tasks)) {
      const fullPath = `/kernels/${k.domain}/tasks/${name}`;
      const response = z.object({ domain: z.literal(k.domain), task: z.literal(name), output: t.output, duration_ms: z.number() });
      const op = operation({ ...generic, fullPath, params: undefined, body: t.input, response, summary: `${k.domain}.${name}: ${t.summary}`, description: `${k.description}. Runs on the least busy eligible node of kernel "${k.domain}"; the same as ${generic.method.toUpperCase()} ${TASK_ROUTE}.` }, 'kernel tasks');
      components[taskInputName(k.domain, name)] = jsonSchema(t.input, 'input');
      op.requestBody = { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${taskInputName(k.domain, name)}` } } } };
      out[fullPath] = { [generic.method]: { ...op, 'x-kernel-task': { domain: k.domain, task: name } } };
    }
  }
  return out;
}

/**
 * The generic route's body: the input of the task its path names, so one of the task
 * inputs (the path, not the body, says which; a body is checked against that task's schema).
 */
function genericTaskBody(kernels: KernelTasks[]): Json {
  const inputs = kernels.flatMap((k) => Object.keys(k.tasks).map((name) => ({ $ref: `#/components/schemas/${taskInputName(k.domain, name)}` })));
  return {
    description: `The input of the task named by {domain} and {task}: one of ${inputs.length} task input schemas, each also documented at its own path ${TASK_ROUTE.replace('{domain}', '<domain>').replace('{task}', '<task>')}.`,
    anyOf: inputs,
  };
}

const issue = {
  type: 'object',
  required: ['loc', 'msg', 'type'],
  properties: {
    loc: { type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'integer' }] } },
    msg: { type: 'string' },
    type: { type: 'string' },
  },
};

/** Every error body: `detail` and a stable `code`; some add fields (state, allowed_actions, config_key). */
const errorSchema = {
  type: 'object',
  required: ['detail', 'code'],
  properties: {
    detail: { oneOf: [{ type: 'string' }, { type: 'object' }] },
    code: { type: 'string', description: 'Stable UPPER_SNAKE code, e.g. NOT_FOUND, INVALID_STATE, NOT_CONFIGURED' },
    state: { type: 'string', description: 'INVALID_STATE: the current state' },
    allowed_actions: { type: 'array', items: { type: 'string' }, description: 'INVALID_STATE: what the state allows' },
    config_key: { type: 'string', description: 'NOT_CONFIGURED: the key to set' },
  },
};

/** A 422 body: FastAPI's list of issues. */
const validationErrorSchema = {
  type: 'object',
  required: ['detail', 'code'],
  properties: { detail: { type: 'array', items: issue }, code: { type: 'string', description: 'VALIDATION_ERROR unless the operation names another; VALUE_NOT_STORABLE when the database refused a value the schema let through (PostgreSQL)' } },
};

/** The OpenAPI 3.1 document of the routes the host serves (and, with the task route, of each kernel task). */
export function buildOpenApi(routes: RouteDef[], sockets: SocketDef[], version: string, kernels: KernelTasks[] = []): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const p = (paths[route.fullPath!] ??= {});
    p[route.method] = operation(route, route.pluginId ?? 'core');
  }
  const schemas: Record<string, Json> = { Error: errorSchema, ValidationError: validationErrorSchema };
  const generic = routes.find((r) => r.fullPath === TASK_ROUTE && r.method === 'post');
  if (generic && kernels.length) {
    Object.assign(paths, taskOperations(generic, kernels, schemas));
    (paths[TASK_ROUTE][generic.method] as Json).requestBody = { required: true, content: { 'application/json': { schema: genericTaskBody(kernels) } } };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Platform Control API',
      version,
      description:
        'Control plane for a mesh of kernels. Every path is also served under /api. ' +
        `WebSocket endpoints: ${sockets.map((s) => s.fullPath).join(', ') || 'none'}.`,
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas,
    },
  };
}
