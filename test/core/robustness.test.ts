import { expect } from 'chai';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

// Every declared route, hit with malformed input as an admin: no answer may be a 500, and
// the process must keep serving. (502/503 are legitimate answers of kernel tasks.)
const PARAMS = ['x', '00000000-0000-4000-8000-000000000000', 'a'.repeat(300), '%00', '..%2F..', 'trading-999999'];
const BODIES: Array<string | undefined> = [undefined, '{}', '[]', '"text"', 'null', '{"a":' + '['.repeat(50) + ']'.repeat(50) + '}', JSON.stringify({ name: null, title: 7, events: [{}], steps: 'x', limit: -1, tenant_id: {}, email: [], password: 1 }), JSON.stringify({ name: 'nul\u0000', title: 'x', note: { 'k\u0000': 1 } })];
const QUERY = '?limit=-5&cursor=%ff%fe&since=yesterday&until=0&window=abc&type=nope&tenant_id=../x';

// On both stores: PostgreSQL refuses values (a NUL, an integer past its column) that SQLite keeps.
eachDatabase('robustness: malformed input on every route never answers 500', (db) => {
  let t: TestHost;
  before(async function () {
    this.timeout(60_000);
    // Input handling is under test, not chaos: validate_production's experiment per kernel is
    // kept short (at its default 5 s per kernel it took most of this test's budget).
    t = await startHost({ db, config: { chaos: { validation: { durationSeconds: 1 } } } });
  });
  after(() => t.stop());

  it('answers every malformed request with a 4xx (or a 502/503 from a kernel)', async function () {
    this.timeout(240_000);
    const admin = await t.host.services.db('users').where({ email: t.admin.email }).first();
    // A fresh token each time: some routes (logout) revoke the one they are called with.
    const token = () => t.host.services.auth.sign({ id: admin.id, tenantId: admin.tenant_id, role: 'admin', email: admin.email }).token;
    const failures: string[] = [];
    let requests = 0;
    // Each path with every body, and with the malformed query (without a body): the query's
    // parsing does not depend on the body.
    const calls: Array<{ method: string; url: string; body: string | undefined }> = [];
    for (const p of t.host.plugins) {
      for (const r of p.routes) {
        const paths = r.fullPath!.includes('{') ? PARAMS.map((v) => r.fullPath!.replace(/\{[^}]+\}/g, v)) : [r.fullPath!];
        const bodies = r.method === 'get' || r.method === 'delete' ? [undefined] : BODIES;
        for (const path of paths) {
          for (const body of bodies) calls.push({ method: r.method.toUpperCase(), url: path, body });
          calls.push({ method: r.method.toUpperCase(), url: path + QUERY, body: undefined });
        }
      }
    }
    // A few at a time: every route is still hit with every input, in a fraction of the time.
    let next = 0;
    const worker = async () => {
      while (next < calls.length) {
        const c = calls[next++];
        const res = await t.request(c.method, c.url, { raw: c.body, token: token() });
        requests++;
        if (res.status >= 500 && res.status !== 502 && res.status !== 503) {
          failures.push(`${c.method} ${c.url} body=${c.body?.slice(0, 40)} -> ${res.status} ${res.text.slice(0, 120)}`);
        }
        if (res.status >= 400 && !(res.body && typeof res.body === 'object' && 'detail' in res.body)) failures.push(`${c.method} ${c.url}: ${res.status} without a detail`);
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    expect(failures, failures.join('\n')).to.deep.equal([]);
    expect(requests).to.be.greaterThan(500);
    expect((await t.request('GET', '/health/')).status).to.equal(200);
  });
});
