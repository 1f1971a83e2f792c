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
    const doc = (await t.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`)).sort();
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
