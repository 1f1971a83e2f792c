import { z } from 'zod';
import { invalid } from '../../core/errors';
import { bearerOf, callSelf, selfUrl } from '../../core/http/loopback';
import { VERSION } from '../../core/meta';
import { cloudEventsRef } from '../../core/contracts/cloudevents';
import { workflowsRef } from '../../core/contracts/workflows';
import { definePlugin, optional, provide } from '../../core/plugin';
import { core } from '../../core/services';
import { tenantScope } from '../../core/tenancy';
import { buildAsyncApi, validateAsyncApi } from './asyncapi';
import { actionEvent, catalogue, streamEvent } from './cloudevents';
import { downConvert, dereference, validateOpenApi } from './openapi';
import { httpStepType } from './http-steps';
import { interopMigrations, operationsOf, saveOperations } from './operations';
import { exportWorkflows, FORMAT, importWorkflows, portableWorkflow, workflowDocument } from './workflows';

const json = z.record(z.string(), z.unknown());
const validation = z.object({ valid: z.boolean(), validator: z.string(), errors: z.array(z.object({ message: z.string(), path: z.string().nullable() })) });
const empty = z.object({}).strict().optional();

export default definePlugin({
  id: 'interop',
  prefix: '/interop',
  deps: { db: core.db, actions: core.actions, config: core.config, workflows: optional(workflowsRef) },
  // Alert subscriptions that ask for CloudEvents get their bodies from here (plugin alerts).
  provides: [provide(cloudEventsRef, { deps: {}, factory: () => ({ fromBusEvent: streamEvent }) })],
  migrations: interopMigrations,
  // Imported operations become workflow steps of kind `http` (when the workflows plugin is installed).
  start: (d) => d.workflows?.registerStepType(httpStepType(d.db, d.config.interop)),
  routes: (route) => [
    route({
      method: 'post',
      path: '/export/openapi3',
      summary: 'This service described as OpenAPI 3.0.3 (down-converted from its 3.1 document), validated by swagger-parser',
      access: 'viewer',
      feature: 'interop',
      body: empty,
      response: z.object({ document: json, validation }),
      errors: [503],
      handler: async ({ req }) => {
        const own = await callSelf(selfUrl(req), 'GET', '/openapi.json');
        const document = downConvert(own.body as Record<string, unknown>);
        const v = await validateOpenApi(document);
        return { document, validation: { valid: v.valid, validator: '@apidevtools/swagger-parser', errors: v.errors } };
      },
    }),
    route({
      method: 'post',
      path: '/validate/openapi3',
      summary: "Validate an OpenAPI (2.0, 3.0 or 3.1) document; the validator's own errors",
      access: 'viewer',
      feature: 'interop',
      body: z.object({ document: json }),
      response: validation.extend({ version: z.string().nullable() }),
      handler: async ({ body }) => ({ ...(await validateOpenApi(body.document)), validator: '@apidevtools/swagger-parser' }),
    }),
    route({
      method: 'post',
      path: '/import/openapi3',
      summary: "Register an outside API's operations (HTTP method, URL, parameter, body and response schemas) for the tenant, as workflow steps",
      description: 'The document must validate; a re-import under the same name replaces that API\'s operations. External $refs are not followed. Each operation is then a workflow step `{kernel: "http", task: "<name>.<operation_id>", input: {path, query, headers, body}}` calling hosts listed in interop.allowedHosts.',
      access: 'member',
      feature: 'interop',
      body: z.object({ name: z.string().regex(/^[a-z][a-z0-9_-]{0,99}$/), base_url: z.url({ protocol: /^https?$/ }), document: json }),
      response: z.object({ name: z.string(), operations: z.array(z.object({ id: z.string(), operation_id: z.string(), method: z.string(), url: z.string(), summary: z.string().nullable(), schemas: json })) }),
      status: 201,
      errors: [422],
      handler: async ({ body, caller, services }) => {
        const v = await validateOpenApi(body.document);
        if (!v.valid) throw invalid(['body', 'document'], `not a valid OpenAPI document: ${v.errors.map((e) => `${e.path ?? ''} ${e.message}`.trim()).join('; ')}`.slice(0, 2000));
        if (!String(v.version).startsWith('3.')) throw invalid(['body', 'document', 'openapi'], 'an OpenAPI 3.x document is needed');
        const ops = operationsOf(await dereference(body.document), body.name, body.base_url, new Date().toISOString());
        if (!ops.length) throw invalid(['body', 'document', 'paths'], 'the document has no operations');
        await saveOperations(tenantScope(services.db, caller!), services.db, body.name, ops);
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'import_openapi', target_type: 'interop_api', target_id: body.name, result: 'succeeded', detail: { operations: ops.length, base_url: body.base_url }, tenant_id: caller!.tenantId });
        return { name: body.name, operations: ops.map(({ api_name: _a, created_at: _c, ...o }) => o) };
      },
    }),
    route({
      method: 'post',
      path: '/export/asyncapi',
      summary: 'AsyncAPI 3.0 description of the /ops/stream WebSocket (every message type with its schema), validated by @asyncapi/parser',
      access: 'viewer',
      feature: 'interop',
      body: empty,
      response: z.object({ document: json, validation }),
      handler: async ({ req }) => {
        const document = buildAsyncApi(VERSION, req.headers.host ?? 'localhost');
        const v = await validateAsyncApi(document);
        return { document, validation: { valid: v.valid, validator: '@asyncapi/parser', errors: v.errors } };
      },
    }),
    route({
      method: 'post',
      path: '/export/cloudevents',
      summary: "The tenant's recorded events (control actions) as CloudEvents 1.0 in structured JSON, each validated by the cloudevents SDK, with the catalogue of event types",
      access: 'viewer',
      feature: 'interop',
      body: z.object({ since: z.iso.datetime().optional(), until: z.iso.datetime().optional(), limit: z.number().int().min(1).max(1000).default(100), cursor: z.string().max(512).optional() }).default({ limit: 100 }),
      response: z.object({ specversion: z.literal('1.0'), types: z.array(z.object({ type: z.string(), stream_type: z.string(), description: z.string() })), events: z.array(json), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: async ({ body, caller, services }) => {
        let page;
        try {
          page = await services.actions.list({ since: body.since, until: body.until, limit: body.limit, cursor: body.cursor, scope: { tenant_id: caller!.tenantId, platform: false } });
        } catch {
          throw invalid(['body', 'cursor'], 'malformed cursor');
        }
        return { specversion: '1.0' as const, types: catalogue(), events: page.actions.map(actionEvent), next_cursor: page.next_cursor };
      },
    }),
    route({
      method: 'post',
      path: '/workflows/export',
      summary: `Workflow definitions in the versioned exchange format (${FORMAT} v1) and in the Serverless Workflow DSL`,
      access: 'viewer',
      feature: 'interop',
      body: z.object({ workflow_ids: z.array(z.uuid()).min(1).max(100).optional() }).default({}),
      response: z.object({ format: z.literal(FORMAT), version: z.literal(1), exported_at: z.string(), workflows: z.array(portableWorkflow.extend({ id: z.string(), serverless_workflow: json })) }),
      errors: [404, 422, 503],
      handler: async ({ body, req }) => ({
        format: FORMAT,
        version: 1 as const,
        exported_at: new Date().toISOString(),
        workflows: await exportWorkflows(selfUrl(req), bearerOf(req)!, body.workflow_ids),
      }),
    }),
    route({
      method: 'post',
      path: '/workflows/import',
      summary: `Create workflow definitions from a ${FORMAT} v1 document (as the export writes it)`,
      access: 'member',
      feature: 'interop',
      body: workflowDocument,
      response: z.object({ imported: z.array(z.object({ id: z.string(), name: z.string() })) }),
      status: 201,
      errors: [422, 503],
      handler: async ({ body, req, caller, services }) => {
        const imported = await importWorkflows(selfUrl(req), bearerOf(req)!, body);
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'import_workflows', target_type: 'workflow', target_id: imported.map((w) => w.id).join(',').slice(0, 128), result: 'succeeded', detail: { workflows: imported }, tenant_id: caller!.tenantId });
        return { imported };
      },
    }),
  ],
});
