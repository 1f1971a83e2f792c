import { Writable } from 'node:stream';
import zlib from 'node:zlib';
import { expect } from 'chai';
import { z } from 'zod';
import { Conflict, Forbidden, NotFound, Unavailable } from '../../core/errors';
import { createLogger } from '../../core/logger';
import { definePlugin } from '../../core/plugin';
import { anyRoute as route } from '../helpers/host';
import healthPlugin from '../../plugins/health';
import { startHost, type TestHost } from '../helpers/host';

const echo = definePlugin({
  id: 'echo',
  prefix: '/echo',
  deps: {},
  routes: () => [
    route({
      method: 'post',
      path: '/items/{item_id}',
      summary: 'echo a validated body',
      access: 'public',
      params: z.object({ item_id: z.uuid() }),
      query: z.object({ n: z.coerce.number().int().min(1).max(10).default(1) }),
      body: z.object({ name: z.string().min(1), size: z.number().int().positive() }),
      status: 201,
      handler: ({ params, query, body }) => ({ id: params.item_id, n: query.n, ...body }),
    }),
    route({
      method: 'get',
      path: '/fail/{kind}',
      summary: 'throws the named error',
      access: 'public',
      params: z.object({ kind: z.string() }),
      handler: ({ params }) => {
        if (params.kind === 'notfound') throw new NotFound('no such thing');
        if (params.kind === 'conflict') throw new Conflict('state forbids it');
        if (params.kind === 'forbidden') throw new Forbidden();
        if (params.kind === 'unavailable') throw new Unavailable('kernel draining', 2);
        throw new Error('secret internal failure at /srv/app.js:42');
      },
    }),
    route({ method: 'get', path: '/who', summary: 'the caller', access: 'authenticated', handler: ({ caller }) => ({ role: caller!.role }) }),
    route({
      method: 'get',
      path: '/things/{name}',
      summary: 'a parameter route beside a literal one',
      access: 'public',
      params: z.object({ name: z.string() }),
      handler: ({ params }) => ({ param: params.name }),
    }),
    route({ method: 'get', path: '/things/latest', summary: 'a literal route', access: 'public', handler: () => ({ literal: true }) }),
    route({ method: 'get', path: '/ops', summary: 'operators only', access: 'operator', handler: () => ({ ok: true }) }),
    route({
      method: 'get',
      path: '/bad-response',
      summary: 'returns something its schema forbids',
      access: 'public',
      response: z.object({ ok: z.literal(true) }),
      handler: () => ({ ok: false }) as never,
    }),
  ],
});

describe('HTTP conventions', () => {
  let t: TestHost;
  const lines: string[] = [];
  before(async () => {
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        cb();
      },
    });
    t = await startHost({ plugins: [healthPlugin, echo], logger: createLogger('info', sink), config: { server: { bodyLimit: 2048 } } });
  });
  after(() => t.stop());

  const id = '6f1c1c1e-8a0b-4a39-9f6a-1e1f1f1f1f1f';

  it('validates and passes typed input to the handler', async () => {
    const r = await t.request('POST', `/echo/items/${id}?n=3`, { body: { name: 'a', size: 2 } });
    expect(r.status).to.equal(201);
    expect(r.body).to.deep.equal({ id, n: 3, name: 'a', size: 2 });
  });

  it('answers 422 with FastAPI-style detail naming each bad field', async () => {
    const r = await t.request('POST', '/echo/items/not-a-uuid?n=99', { body: { size: -1 } });
    expect(r.status).to.equal(422);
    const locs = r.body.detail.map((d: { loc: unknown[] }) => d.loc.join('.'));
    expect(locs).to.include.members(['path.item_id', 'query.n', 'body.name', 'body.size']);
    const missing = r.body.detail.find((d: { loc: unknown[] }) => d.loc.join('.') === 'body.name');
    expect(missing).to.deep.equal({ loc: ['body', 'name'], msg: 'Field required', type: 'missing' });
    for (const d of r.body.detail) expect(d).to.have.all.keys('loc', 'msg', 'type');
  });

  it('answers 400 for malformed JSON', async () => {
    const r = await t.request('POST', `/echo/items/${id}`, { raw: '{"name": ' });
    expect(r.status).to.equal(400);
    expect(r.body.detail).to.match(/Malformed JSON/);
  });

  it('reads JSON bodies like body-parser: strict top level, charset, compression, streamed size', async () => {
    const post = (body: string | Buffer | ReadableStream, headers: Record<string, string>) => fetch(`${t.url}/echo/items/${id}`, { method: 'POST', headers, body, duplex: 'half' } as never);
    const scalar = await post('"just a string"', { 'content-type': 'application/json' });
    expect(scalar.status).to.equal(400);
    const latin1 = await post('{"name":"a","size":1}', { 'content-type': 'application/json; charset=latin1' });
    expect(latin1.status).to.equal(415);
    const utf8 = await post('{"name":"ä","size":1}', { 'content-type': 'application/json; charset=UTF-8' });
    expect(await utf8.json()).to.include({ name: 'ä', size: 1 });
    const gz = await post(zlib.gzipSync('{"name":"z","size":2}'), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect(gz.status).to.equal(201);
    expect(await gz.json()).to.include({ name: 'z' });
    const empty = await post('', { 'content-type': 'application/json' });
    expect(empty.status).to.equal(422); // {} lacks the required fields
    // No Content-Length: the size is counted while reading.
    const big = JSON.stringify({ name: 'x'.repeat(4000), size: 1 });
    const stream = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(big)); c.close(); } });
    const streamed = await post(stream, { 'content-type': 'application/json' });
    expect(streamed.status).to.equal(413);
  });

  it('answers 413 over the body limit', async () => {
    const r = await t.request('POST', `/echo/items/${id}`, { body: { name: 'x'.repeat(5000), size: 1 } });
    expect(r.status).to.equal(413);
    expect(r.body.detail).to.match(/2048 bytes/);
  });

  it('answers a JSON 404 for unknown routes', async () => {
    const r = await t.request('GET', '/no/such/route');
    expect(r.status).to.equal(404);
    expect(r.headers.get('content-type')).to.match(/application\/json/);
    expect(r.body.detail).to.match(/Not Found/);
  });

  it('turns typed errors into their statuses', async () => {
    expect((await t.request('GET', '/echo/fail/notfound')).status).to.equal(404);
    expect((await t.request('GET', '/echo/fail/conflict')).body).to.deep.equal({ detail: 'state forbids it', code: 'CONFLICT' });
    expect((await t.request('GET', '/echo/fail/forbidden')).status).to.equal(403);
    const u = await t.request('GET', '/echo/fail/unavailable');
    expect(u.status).to.equal(503);
    expect(u.headers.get('retry-after')).to.equal('2');
  });

  it('never leaks a stack trace or internal message', async () => {
    const r = await t.request('GET', '/echo/fail/boom');
    expect(r.status).to.equal(500);
    expect(r.body).to.deep.equal({ detail: 'Internal Server Error', code: 'INTERNAL' });
    expect(r.text).not.to.match(/srv|\.js|at /);
  });

  it('checks responses against their schema in test mode', async () => {
    const r = await t.request('GET', '/echo/bad-response');
    expect(r.status).to.equal(500);
  });

  it('keeps a client X-Request-Id and makes one otherwise', async () => {
    const kept = await t.request('GET', '/health/', { headers: { 'x-request-id': 'trace-abc.123' } });
    expect(kept.headers.get('x-request-id')).to.equal('trace-abc.123');
    const made = await t.request('GET', '/health/');
    expect(made.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    const refused = await t.request('GET', '/health/', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(refused.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    const onError = await t.request('GET', '/nowhere');
    expect(onError.headers.get('x-request-id')).to.be.a('string');
  });

  it('serves every route under /api and with or without the trailing slash', async () => {
    for (const p of ['/health/', '/health', '/api/health/', '/api/health']) {
      expect((await t.request('GET', p)).status, p).to.equal(200);
    }
    expect((await t.request('GET', '/api/health/component/database/')).status).to.equal(200);
  });

  it('prefers a literal route over a pattern and decodes path parameters', async () => {
    expect((await t.request('GET', '/echo/things/latest')).body).to.deep.equal({ literal: true });
    expect((await t.request('GET', '/echo/things/LATEST/')).body).to.deep.equal({ literal: true });
    expect((await t.request('GET', '/echo/things/a%20b')).body).to.deep.equal({ param: 'a b' });
    expect((await t.request('GET', '/api/echo/things/x')).body).to.deep.equal({ param: 'x' });
    const bad = await t.request('GET', '/echo/things/%E0%A4%A');
    expect(bad.status).to.equal(400);
    expect(bad.body.detail).to.match(/percent-encoding/);
    expect((await t.request('GET', '/echo/things/a/b')).status).to.equal(404);
  });

  it('answers 405 with Allow for a known path and another method; OPTIONS lists the methods; HEAD is GET without a body', async () => {
    const wrong = await t.request('DELETE', '/echo/who');
    expect(wrong.status).to.equal(405);
    expect(wrong.headers.get('allow')).to.equal('GET, HEAD');
    expect(wrong.body.detail).to.match(/Method Not Allowed/);
    const options = await t.request('OPTIONS', '/api/echo/items/abc');
    expect(options.status).to.equal(204);
    expect(options.headers.get('allow')).to.equal('POST');
    const head = await fetch(`${t.url}/health/`, { method: 'HEAD' });
    expect(head.status).to.equal(200);
    expect(await head.text()).to.equal('');
  });

  it('enforces the declared access rule', async () => {
    expect((await t.request('GET', '/echo/who', { token: null })).status).to.equal(401);
    const bad = await t.request('GET', '/echo/who', { token: 'not.a.jwt' });
    expect(bad.status).to.equal(401);
    expect(bad.headers.get('www-authenticate')).to.equal('Bearer');
    const viewer = await t.userToken('viewer');
    expect((await t.request('GET', '/echo/who', { token: viewer.token })).body).to.deep.equal({ role: 'viewer' });
    expect((await t.request('GET', '/echo/ops', { token: viewer.token })).status).to.equal(403);
    const op = await t.userToken('operator');
    expect((await t.request('GET', '/echo/ops', { token: op.token })).status).to.equal(200);
    expect((await t.request('GET', '/echo/ops')).status).to.equal(200); // admin is above operator
  });

  it('logs one line per request and never a credential', async () => {
    lines.length = 0;
    await t.request('GET', '/echo/who?token=supersecretquery');
    await t.request('POST', '/echo/items/x', { body: { password: 'hunter2-password' } });
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(requests).to.have.length(2);
    expect(requests[0]).to.include({ method: 'GET', status: 200, route: '/echo/who' });
    const all = lines.join('\n');
    expect(all).not.to.include(t.adminToken);
    expect(all).not.to.include('supersecretquery');
    expect(all).not.to.include('hunter2-password');
    expect(all).not.to.match(/authorization/i);
  });
});
