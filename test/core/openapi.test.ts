import SwaggerParser from '@apidevtools/swagger-parser';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { matchKey, servedRoutes, specEndpoints } from '../helpers/spec';
import { startHost, type TestHost } from '../helpers/host';

const execFileAsync = promisify(execFile);
/** The repository root (tests run from dist/test/core). */
const ROOT = resolve(__dirname, '../../..');

interface Media { schema?: Record<string, unknown> }
interface Operation {
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}

/** A schema that admits any object: no properties, no alternatives, no reference. */
function freeForm(schema: Record<string, unknown> | undefined): boolean {
  if (!schema) return true;
  if (schema.$ref || schema.oneOf || schema.anyOf || schema.allOf) return false;
  const props = schema.properties as object | undefined;
  // An object that admits no fields at all (`z.object({}).strict()`) is described, not free.
  return !props || (Object.keys(props).length === 0 && schema.additionalProperties !== false);
}

describe('OpenAPI document and spec conformance (all discovered plugins)', () => {
  let t: TestHost;
  before(async () => {
    t = await startHost();
  });
  after(() => t.stop());

  it('serves a valid OpenAPI 3.1 document at /openapi.json (public)', async () => {
    const r = await t.request('GET', '/openapi.json', { token: null });
    expect(r.status).to.equal(200);
    expect(r.body.openapi).to.equal('3.1.0');
    await SwaggerParser.validate(structuredClone(r.body));
  });

  it('lists exactly the routes the host serves, and each really answers', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, Record<string, unknown>>> };
    // Kernel tasks are documented at their own paths too (served by the generic task route).
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).filter((m) => !ops[m]['x-kernel-task']).map((m) => `${m.toUpperCase()} ${p}`)).sort();
    const declared = t.host.plugins.flatMap((p) => p.routes.map((r) => `${r.method.toUpperCase()} ${r.fullPath}`)).sort();
    expect(documented).to.deep.equal(declared);
    for (const entry of documented) {
      const [method, p] = entry.split(' ');
      const concrete = p.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
      const r = await t.request(method, concrete, { body: method === 'GET' ? undefined : {} });
      // The unknown-route fallback is the only answer that starts this way.
      expect(String(r.body?.detail ?? ''), entry).not.to.match(/^Not Found: /);
      // Whatever it answers to this call is a status the document lists for it, and an error
      // body has the shape the document gives (detail and a code).
      const op = doc.paths[p][method.toLowerCase()] as unknown as Operation;
      expect(Object.keys(op.responses), `${entry} answered ${r.status}`).to.include(String(r.status));
      if (r.status >= 400) expect(r.body, entry).to.include.keys('detail', 'code');
      if (r.status === 422) expect(r.body.detail, entry).to.be.an('array');
    }
  });

  it('describes every request body and every response (no free-form schema)', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, Operation>> };
    const freeBodies: string[] = [];
    const bareResponses: string[] = [];
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const entry = `${method.toUpperCase()} ${p}`;
        for (const media of Object.values(op.requestBody?.content ?? {})) if (freeForm(media.schema)) freeBodies.push(entry);
        for (const [status, resp] of Object.entries(op.responses)) {
          if (status === '204') continue;
          const media = Object.values(resp.content ?? {});
          if (media.length === 0 || media.some((m) => Object.keys(m.schema ?? {}).length === 0)) bareResponses.push(`${entry} ${status}`);
        }
      }
    }
    expect(freeBodies).to.deep.equal([]);
    expect(bareResponses).to.deep.equal([]);
  });

  it('shows the ingest events from the rule table and the login form as a form', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, Operation>> };
    const ingest = doc.paths['/observability/v1/ingest/kernel'].post.requestBody!.content['application/json'].schema as { oneOf: Array<Record<string, any>> };
    const [event, batch] = ingest.oneOf;
    expect(event.required).to.have.members(['kernel', 'task', 'duration_ms']);
    expect(event.additionalProperties).to.equal(false);
    expect(event.properties.trace_id.pattern).to.equal('^[0-9a-fA-F]{32}$');
    expect(batch.properties.events.items).to.deep.equal(event);
    const form = doc.paths['/auth/login-form'].post.requestBody!.content;
    expect(Object.keys(form)).to.deep.equal(['application/x-www-form-urlencoded']);
    expect(Object.keys((form['application/x-www-form-urlencoded'].schema as { properties: object }).properties)).to.include.members(['username', 'password', 'grant_type']);
  });

  it('lints clean with Redocly (rules in redocly.yaml)', async function () {
    this.timeout(60_000);
    const doc = (await t.request('GET', '/openapi.json')).body as object;
    const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    try {
      const run = await execFileAsync(process.execPath, [join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format', 'json'], {
        maxBuffer: 64 * 1024 * 1024,
      }).catch((err: { stdout?: string; stderr?: string; code?: number }) => err);
      const out = JSON.parse(run.stdout ?? '{}') as { totals?: { errors: number }; problems?: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }> };
      const errors = (out.problems ?? []).filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
      expect(out.totals, run.stderr).to.not.equal(undefined);
      expect(errors).to.deep.equal([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('documents each kernel task at its own path with its input and output schemas', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    const tasks = Object.entries(doc.paths as Record<string, Record<string, any>>).filter(([, ops]) => ops.post?.['x-kernel-task']);
    const expected = [...t.host.services.mesh.kernelMap.values()].flatMap((k) => Object.keys(k.manifest.tasks).map((name) => `/kernels/${k.id}/tasks/${name}`));
    expect(tasks.map(([p]) => p).sort()).to.deep.equal(expected.sort());
    expect(expected).to.include('/kernels/analytics/tasks/describe');
    const describe = doc.paths['/kernels/analytics/tasks/describe'].post;
    expect(describe['x-kernel-task']).to.deep.equal({ domain: 'analytics', task: 'describe' });
    const input = describe.requestBody.content['application/json'].schema as { $ref: string };
    expect(input.$ref).to.equal('#/components/schemas/analytics.describe.input');
    expect(doc.components.schemas['analytics.describe.input'].properties.values).to.include({ type: 'array', minItems: 1 });
    const ok = describe.responses['200'].content['application/json'].schema;
    expect(ok.properties.domain).to.deep.equal({ type: 'string', const: 'analytics' });
    expect(ok.properties.output.required).to.include.members(['count', 'mean', 'median']);
    expect(Object.keys(describe.responses)).to.include.members(['401', '403', '422', '502', '503']);
    // The generic route stays; its body is one of the task inputs, each a component.
    const generic = doc.paths['/kernels/{domain}/tasks/{task}'].post.requestBody.content['application/json'].schema as { anyOf: Array<{ $ref: string }> };
    const named = (p: string) => p.replace(/^\/kernels\/([^/]+)\/tasks\/([^/]+)$/, '#/components/schemas/$1.$2.input');
    expect(generic.anyOf.map((s) => s.$ref).sort()).to.deep.equal(expected.map(named).sort());
    for (const s of generic.anyOf) expect(doc.components.schemas[s.$ref.split('/').pop()!], s.$ref).to.be.an('object');
    // And the task's own path really runs it (a fresh token: the test above logged the admin out).
    const member = (await t.userToken('member')).token;
    const r = await t.request('POST', '/kernels/analytics/tasks/describe', { body: { values: [1, 2, 3] }, token: member });
    expect(r.body.output, r.text).to.include({ count: 3, mean: 2 });
  });

  it('every served route that the spec names has the spec method and path exactly', () => {
    const spec = new Map(specEndpoints().map((e) => [matchKey(e.method, e.path), e]));
    for (const r of servedRoutes()) {
      const s = spec.get(matchKey(r.method, r.path));
      if (!s) continue;
      const specPath = s.path.startsWith('/api/') ? s.path.slice(4) : s.path;
      // /api/... spec entries are served through the /api alias of the same route.
      const sameTrailing = s.path.startsWith('/api/') ? specPath.replace(/\/$/, '') === r.path.replace(/\/$/, '') : specPath === r.path;
      expect(sameTrailing, `${r.method} ${r.path} (${r.plugin}) vs spec ${s.method} ${s.path}`).to.equal(true);
      expect(r.method).to.equal(s.method);
    }
  });
});
