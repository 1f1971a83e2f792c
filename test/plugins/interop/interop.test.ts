import SwaggerParser from '@apidevtools/swagger-parser';
import { Parser } from '@asyncapi/parser';
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CloudEvent } from 'cloudevents';
import interop from '../../../plugins/interop';
import workflows from '../../../plugins/workflows';
import { startHost, type TestHost } from '../../helpers/host';

/** Every value under `o` for which `pred` holds, with its path. */
function findAll(o: unknown, pred: (k: string, v: unknown) => boolean, path = ''): string[] {
  if (!o || typeof o !== 'object') return [];
  return Object.entries(o as Record<string, unknown>).flatMap(([k, v]) => [...(pred(k, v) ? [`${path}/${k}`] : []), ...findAll(v, pred, `${path}/${k}`)]);
}

const outside = {
  openapi: '3.0.3',
  info: { title: 'Weather', version: '2.1.0' },
  paths: {
    '/forecast/{city}': {
      parameters: [{ name: 'city', in: 'path', required: true, schema: { type: 'string' } }],
      get: { operationId: 'getForecast', summary: 'Forecast of a city', parameters: [{ name: 'days', in: 'query', schema: { type: 'integer', minimum: 1 } }], responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Forecast' } } } } } },
    },
    '/alerts': { post: { requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { text: { type: 'string' } } } } } }, responses: { '201': { description: 'made' } } } },
  },
  components: { schemas: { Forecast: { type: 'object', required: ['temps'], properties: { temps: { type: 'array', items: { type: 'number' } } } } } },
};

describe('interop (OpenAPI, AsyncAPI, CloudEvents, workflow exchange)', () => {
  let t: TestHost;
  let viewer: string;
  let member: string;
  let acmeMember: string;
  before(async () => {
    t = await startHost({ plugins: [interop, workflows] });
    viewer = (await t.userToken('viewer')).token;
    member = (await t.userToken('member')).token;
    acmeMember = (await t.userToken('member', 'acme')).token;
  });
  after(() => t.stop());

  describe('POST /interop/export/openapi3', () => {
    it('answers our document as OpenAPI 3.0.3 that swagger-parser validates, with no 3.1-only constructs', async () => {
      const r = await t.request('POST', '/interop/export/openapi3', { token: viewer, body: {} });
      expect(r.status).to.equal(200);
      expect(r.body.validation).to.deep.equal({ valid: true, validator: '@apidevtools/swagger-parser', errors: [] });
      const doc = r.body.document;
      expect(doc.openapi).to.equal('3.0.3');
      expect(doc.paths).to.have.property('/interop/export/openapi3');
      expect(Object.keys(doc.paths).length).to.equal(Object.keys((await t.request('GET', '/openapi.json')).body.paths).length);
      expect(findAll(doc, (k, v) => k === 'type' && Array.isArray(v))).to.deep.equal([]);
      expect(findAll(doc, (k, v) => (k === 'exclusiveMinimum' || k === 'exclusiveMaximum') && typeof v === 'number')).to.deep.equal([]);
      expect(findAll(doc, (k) => k === 'const' || k === '$defs' || k === 'propertyNames')).to.deep.equal([]);
      // validated here too, independently of the route's own answer
      await SwaggerParser.validate(structuredClone(doc));
      const nullable = findAll(doc, (k, v) => k === 'nullable' && v === true);
      expect(nullable.length).to.be.greaterThan(0);
    });

    it('answers 401 without a token and 422 for an unexpected body', async () => {
      expect((await t.request('POST', '/interop/export/openapi3', { token: null })).status).to.equal(401);
      expect((await t.request('POST', '/interop/export/openapi3', { token: viewer, body: { x: 1 } })).status).to.equal(422);
    });
  });

  describe('POST /interop/validate/openapi3', () => {
    it("returns the validator's verdict and errors", async () => {
      const ok = await t.request('POST', '/interop/validate/openapi3', { token: viewer, body: { document: outside } });
      expect(ok.status).to.equal(200);
      expect(ok.body).to.include({ valid: true, version: '3.0.3' });
      const bad = structuredClone(outside) as any;
      bad.components.schemas.Forecast.properties.temps.type = ['array', 'null'];
      delete bad.info.title;
      const r = await t.request('POST', '/interop/validate/openapi3', { token: viewer, body: { document: bad } });
      expect(r.status).to.equal(200);
      expect(r.body.valid).to.equal(false);
      expect(r.body.errors.map((e: { path: string }) => e.path)).to.include('/info');
    });

    it('never follows an external reference', async () => {
      let hits = 0;
      const server = http.createServer((_q, res) => {
        hits++;
        res.end('{}');
      });
      await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/evil.json`;
        const doc = { ...outside, paths: { '/x': { get: { responses: { '200': { $ref: url } } } } } };
        const r = await t.request('POST', '/interop/validate/openapi3', { token: viewer, body: { document: doc } });
        expect(r.status).to.equal(200);
        const imp = await t.request('POST', '/interop/import/openapi3', { token: member, body: { name: 'evil', base_url: 'https://x.example', document: doc } });
        expect(imp.status).to.equal(201);
        expect(hits).to.equal(0);
      } finally {
        server.close();
      }
    });

    it('answers 401 without a token and 422 without a document', async () => {
      expect((await t.request('POST', '/interop/validate/openapi3', { token: null, body: { document: outside } })).status).to.equal(401);
      expect((await t.request('POST', '/interop/validate/openapi3', { token: viewer, body: {} })).status).to.equal(422);
    });
  });

  describe('POST /interop/import/openapi3', () => {
    it("registers each operation with its URL and dereferenced schemas; a re-import replaces the API's operations", async () => {
      const r = await t.request('POST', '/interop/import/openapi3', { token: member, body: { name: 'weather', base_url: 'https://weather.example/v2/', document: outside } });
      expect(r.status).to.equal(201);
      expect(r.body.operations).to.have.length(2);
      const get = r.body.operations.find((o: { operation_id: string }) => o.operation_id === 'getForecast');
      expect(get).to.include({ method: 'GET', url: 'https://weather.example/v2/forecast/{city}', summary: 'Forecast of a city' });
      expect(get.schemas.params.map((p: { name: string }) => p.name)).to.deep.equal(['city', 'days']);
      expect(get.schemas.responses['200']).to.deep.equal(outside.components.schemas.Forecast);
      const post = r.body.operations.find((o: { method: string }) => o.method === 'POST');
      expect(post.operation_id).to.equal('post_alerts');
      expect(post.schemas.request_body).to.deep.equal({ type: 'object', properties: { text: { type: 'string' } } });
      const again = await t.request('POST', '/interop/import/openapi3', { token: member, body: { name: 'weather', base_url: 'https://weather.example', document: { ...outside, paths: { '/alerts': outside.paths['/alerts'] } } } });
      expect(again.status).to.equal(201);
      expect(await t.host.services.db('interop_operations').where({ api_name: 'weather' }).count({ n: '*' })).to.deep.equal([{ n: 1 }]);
    });

    it('answers 403 for a viewer, 401 without a token and 422 for an invalid document or URL, storing nothing', async () => {
      const body = { name: 'other', base_url: 'https://x.example', document: outside };
      expect((await t.request('POST', '/interop/import/openapi3', { token: viewer, body })).status).to.equal(403);
      expect((await t.request('POST', '/interop/import/openapi3', { token: null, body })).status).to.equal(401);
      expect((await t.request('POST', '/interop/import/openapi3', { token: member, body: { ...body, document: { openapi: '3.0.3' } } })).status).to.equal(422);
      expect((await t.request('POST', '/interop/import/openapi3', { token: member, body: { ...body, base_url: 'ftp://x' } })).status).to.equal(422);
      expect(await t.host.services.db('interop_operations').where({ api_name: 'other' }).count({ n: '*' })).to.deep.equal([{ n: 0 }]);
    });
  });

  describe('POST /interop/export/asyncapi', () => {
    it('describes /ops/stream in AsyncAPI 3.0 that @asyncapi/parser validates, with every message type', async () => {
      const r = await t.request('POST', '/interop/export/asyncapi', { token: viewer, body: {} });
      expect(r.status).to.equal(200);
      expect(r.body.validation).to.deep.equal({ valid: true, validator: '@asyncapi/parser', errors: [] });
      const { document, diagnostics } = await new Parser().parse(JSON.stringify(r.body.document));
      expect(diagnostics.filter((d) => Number(d.severity) === 0)).to.deep.equal([]);
      expect(document!.version()).to.equal('3.0.0');
      const names = document!.messages().all().map((m) => m.name());
      for (const type of ['snapshot', 'health_update', 'node_state', 'incident', 'workflow_status', 'chaos_experiment', 'action_taken', 'subscribe']) expect(names).to.include(type);
    });

    it('answers 401 without a token', async () => {
      expect((await t.request('POST', '/interop/export/asyncapi', { token: null })).status).to.equal(401);
    });
  });

  describe('workflow exchange and CloudEvents', () => {
    const steps = [
      { id: 'stats', kernel: 'analytics', task: 'describe', input: { values: [1, 2, 3] } },
      { id: 'more', kernel: 'analytics', task: 'percentiles', input: { values: [4, 5], percentiles: [50] }, timeout_ms: 5000, retries: 2 },
    ];
    const ids: string[] = [];

    it('exports workflow definitions and imports them back exactly (also into another tenant)', async () => {
      for (const name of ['Nightly stats', 'Percentile check']) {
        const c = await t.request('POST', '/workflows', { token: member, body: { name, steps } });
        expect(c.status).to.equal(201);
        ids.push(c.body.id);
      }
      const out = await t.request('POST', '/interop/workflows/export', { token: viewer, body: { workflow_ids: ids } });
      expect(out.status).to.equal(200);
      expect(out.body).to.include({ format: 'platform-control/workflow', version: 1 });
      expect(out.body.workflows.map((w: { name: string }) => w.name)).to.deep.equal(['Nightly stats', 'Percentile check']);
      expect(out.body.workflows[1].serverless_workflow.do[1]).to.deep.equal({ more: { call: 'platform-control:kernel-task', with: { kernel: 'analytics', task: 'percentiles', input: { values: [4, 5], percentiles: [50] } }, timeout: { after: { milliseconds: 5000 } }, metadata: { retries: 2 } } });
      const doc = { format: out.body.format, version: out.body.version, workflows: out.body.workflows.map(({ id: _i, serverless_workflow: _s, ...w }: Record<string, unknown>) => w) };
      const imp = await t.request('POST', '/interop/workflows/import', { token: acmeMember, body: doc });
      expect(imp.status).to.equal(201);
      expect(imp.body.imported).to.have.length(2);
      const back = await t.request('POST', '/interop/workflows/export', { token: acmeMember, body: {} });
      expect(back.status).to.equal(200);
      const strip = (ws: Array<Record<string, unknown>>) => ws.map(({ id: _i, ...w }) => w);
      expect(strip(back.body.workflows)).to.deep.equal(strip(out.body.workflows));
    });

    it("answers 404 for another tenant's workflow, 403 for a viewer's import, 422 for a bad document", async () => {
      expect((await t.request('POST', '/interop/workflows/export', { token: acmeMember, body: { workflow_ids: [ids[0]] } })).status).to.equal(404);
      const doc = { format: 'platform-control/workflow', version: 1, workflows: [{ name: 'x', steps: [] }] };
      expect((await t.request('POST', '/interop/workflows/import', { token: viewer, body: doc })).status).to.equal(403);
      expect((await t.request('POST', '/interop/workflows/import', { token: null, body: doc })).status).to.equal(401);
      expect((await t.request('POST', '/interop/workflows/export', { token: null, body: {} })).status).to.equal(401);
      expect((await t.request('POST', '/interop/workflows/import', { token: member, body: { ...doc, version: 2 } })).status).to.equal(422);
      expect((await t.request('POST', '/interop/workflows/export', { token: member, body: { workflow_ids: ['nope'] } })).status).to.equal(422);
      const before = (await t.request('POST', '/interop/workflows/export', { token: member, body: {} })).body.workflows.length;
      const bad = await t.request('POST', '/interop/workflows/import', { token: member, body: { ...doc, workflows: [{ name: 'y', steps: [{ id: 'a', kernel: 'nosuch', task: 'x', input: {} }] }] } });
      expect(bad.status).to.equal(422);
      expect(bad.body.detail[0].loc.slice(0, 3)).to.deep.equal(['body', 'workflows', 0]);
      // A step's bounds are the workflows API's, checked at the document's own field.
      const slow = await t.request('POST', '/interop/workflows/import', { token: member, body: { ...doc, workflows: [{ name: 'y', steps: [{ id: 'a', kernel: 'trading', task: 'x', input: {}, timeout_ms: 10 ** 12 }] }] } });
      expect(slow.status).to.equal(422);
      expect(slow.body.detail[0].loc).to.deep.equal(['body', 'workflows', 0, 'steps', 0, 'timeout_ms']);
      expect((await t.request('POST', '/interop/workflows/export', { token: member, body: {} })).body.workflows.length).to.equal(before);
    });

    it("exports the tenant's recorded actions as CloudEvents the SDK accepts, and none of another tenant's", async () => {
      const r = await t.request('POST', '/interop/export/cloudevents', { token: acmeMember, body: { limit: 10 } });
      expect(r.status).to.equal(200);
      expect(r.body.types.map((x: { type: string }) => x.type)).to.include('com.platform-control.incident');
      expect(r.body.events).to.have.length(1);
      const e = r.body.events[0];
      expect(e).to.include({ specversion: '1.0', type: 'com.platform-control.action_taken', source: '/platform-control/actions', datacontenttype: 'application/json' });
      expect(e.data).to.include({ action: 'import_workflows', tenant_id: 'acme' });
      expect(new CloudEvent(e).validate()).to.equal(true);
      const mine = await t.request('POST', '/interop/export/cloudevents', { token: viewer, body: {} });
      expect(mine.body.events.every((x: { data: { tenant_id: string } }) => x.data.tenant_id === 'platform')).to.equal(true);
      expect(mine.body.events.map((x: { data: { action: string } }) => x.data.action)).to.include('import_openapi');
    });

    it('answers 401 without a token and 422 for a bad window or cursor', async () => {
      expect((await t.request('POST', '/interop/export/cloudevents', { token: null, body: {} })).status).to.equal(401);
      expect((await t.request('POST', '/interop/export/cloudevents', { token: viewer, body: { since: 'yesterday' } })).status).to.equal(422);
      expect((await t.request('POST', '/interop/export/cloudevents', { token: viewer, body: { cursor: 'zz' } })).status).to.equal(422);
    });
  });
});
