import SwaggerParser from '@apidevtools/swagger-parser';
import { expect } from 'chai';
import { matchKey, servedRoutes, specEndpoints } from '../helpers/spec';
import { startHost, type TestHost } from '../helpers/host';

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
    expect(describe.requestBody.content['application/json'].schema.properties.values).to.include({ type: 'array', minItems: 1 });
    const ok = describe.responses['200'].content['application/json'].schema;
    expect(ok.properties.domain).to.deep.equal({ type: 'string', const: 'analytics' });
    expect(ok.properties.output.required).to.include.members(['count', 'mean', 'median']);
    expect(Object.keys(describe.responses)).to.include.members(['401', '403', '422', '502', '503']);
    // The generic route stays.
    expect(doc.paths['/kernels/{domain}/tasks/{task}'].post.requestBody).to.not.equal(undefined);
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
