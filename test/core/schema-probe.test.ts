import { expect } from 'chai';
import crypto from 'node:crypto';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

// Each operation of the OpenAPI document called with a body that its schema accepts, then
// with one field at a time (also one level down) pushed to an edge: a NUL in a string, the
// longest string allowed, the largest and smallest number allowed, far dates. Unlike the
// malformed-input sweep (robustness.test.ts) these requests pass validation and reach the
// handlers and the database, where PostgreSQL refuses values SQLite keeps.
type Schema = Record<string, any>;
// Not probed: calls that end the caller's session or stop things, kernel tasks (inputs to a
// computation, not stored; each kernel's tests cover their bounds) and the production
// validation, which runs a chaos experiment per kernel.
const SKIP = /logout|shutdown|restart|halt|revoke|^\/kernels\/\{domain\}\/tasks|^\/kernels\/[a-z]+\/tasks|validate_production/i;

function probe(doc: Schema) {
  const deref = (s: Schema | undefined): Schema | undefined => {
    let out = s;
    while (out?.$ref) out = (out.$ref as string).split('/').slice(1).reduce((o: Schema, k: string) => o[k], doc);
    return out;
  };
  const typeOf = (s: Schema) => (Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type);
  const sample = (raw: Schema | undefined, depth = 0): unknown => {
    const s = deref(raw) ?? {};
    if (depth > 6) return null;
    if (s.const !== undefined) return s.const;
    if (s.enum) return s.enum[0];
    if (s.default !== undefined) return s.default;
    for (const k of ['oneOf', 'anyOf']) if (s[k]) return sample(s[k].find((x: Schema) => deref(x)?.type !== 'null') ?? s[k][0], depth + 1);
    switch (typeOf(s)) {
      case 'object': return Object.fromEntries(Object.entries(s.properties ?? {}).filter(([k]) => (s.required ?? []).includes(k)).map(([k, v]) => [k, sample(v as Schema, depth + 1)]));
      case 'array': return Array.from({ length: Math.max(1, s.minItems ?? 1) }, () => sample(s.items, depth + 1));
      case 'integer': return s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
      case 'number': return s.minimum ?? 1;
      case 'boolean': return true;
      case 'string':
        if (s.format === 'date-time') return new Date().toISOString();
        if (s.format === 'uuid') return crypto.randomUUID();
        if (s.format === 'email') return `probe-${crypto.randomUUID().slice(0, 8)}@example.com`;
        if (s.format === 'uri') return 'http://127.0.0.1:9/probe';
        return 'x'.repeat(Math.max(s.minLength ?? 1, 3));
      default: return null;
    }
  };
  const edges = (raw: Schema | undefined): unknown[] => {
    const s = deref(raw) ?? {};
    if (s.enum || s.const !== undefined) return [];
    const type = typeOf(s);
    if (type === 'string' && !s.format && !s.pattern) return ['nul\u0000x', 'y'.repeat(s.maxLength ?? 20_000)];
    if (type === 'string' && s.format === 'date-time') return ['9999-12-31T23:59:59Z', '0001-01-01T00:00:00Z'];
    if (type === 'integer') return [s.maximum ?? Number.MAX_SAFE_INTEGER, s.minimum ?? Number.MIN_SAFE_INTEGER];
    if (type === 'number') return [s.maximum ?? 1e308, s.minimum ?? -1e308];
    return [];
  };
  const calls: Array<{ method: string; url: string; body?: unknown }> = [];
  for (const [p, ops] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [m, op] of Object.entries(ops)) {
      if (SKIP.test(p)) continue;
      const method = m.toUpperCase();
      const url = p.replace(/\{[^}]+\}/g, (x) => (/domain|kernel/.test(x) ? 'trading' : crypto.randomUUID()));
      for (const q of (op.parameters ?? []).filter((x: Schema) => x.in === 'query')) {
        for (const e of edges(q.schema)) calls.push({ method, url: `${url}?${q.name}=${encodeURIComponent(String(e))}` });
      }
      const schema = op.requestBody?.content?.['application/json']?.schema;
      if (!schema) continue;
      const valid = sample(schema) as Record<string, unknown>;
      calls.push({ method, url, body: valid });
      for (const [k, v] of Object.entries((deref(schema)?.properties ?? {}) as Record<string, Schema>)) {
        for (const e of edges(v)) calls.push({ method, url, body: { ...valid, [k]: e } });
        const d = deref(v) ?? {};
        const inner = typeOf(d) === 'array' ? deref(d.items) : d;
        if (typeOf(inner ?? {}) !== 'object' || !inner?.properties) continue;
        const base = sample(inner) as Record<string, unknown>;
        for (const [k2, v2] of Object.entries(inner.properties as Record<string, Schema>)) {
          for (const e of edges(v2)) calls.push({ method, url, body: { ...valid, [k]: typeOf(d) === 'array' ? [{ ...base, [k2]: e }] : { ...base, [k2]: e } } });
        }
      }
    }
  }
  return calls;
}

eachDatabase('schema probe: requests that pass validation never answer 500', (db) => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ db, config: { chaos: { validation: { durationSeconds: 1 } } } });
  });
  after(() => t.stop());

  it('answers every probe with a status other than 500 (502/503/504 are a kernel or outside system saying so)', async function () {
    this.timeout(240_000);
    const calls = probe((await t.request('GET', '/openapi.json')).body);
    const failures: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < calls.length) {
        const c = calls[next++];
        const res = await t.request(c.method, c.url, c.body === undefined ? {} : { body: c.body });
        if (res.status >= 500 && ![502, 503, 504].includes(res.status)) failures.push(`${c.method} ${c.url} ${JSON.stringify(c.body)?.slice(0, 120)} -> ${res.status} ${res.text.slice(0, 120)}`);
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    expect(failures, failures.join('\n')).to.deep.equal([]);
    // Enough of the API was reached for the sweep to mean something.
    expect(calls.length).to.be.greaterThan(1000);
    expect((await t.request('GET', '/health/')).status).to.equal(200);
  });
});
