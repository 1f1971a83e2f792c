import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import interop from '../../../plugins/interop';
import workflows from '../../../plugins/workflows';
import { BUILTIN_KERNELS } from '../../core/mesh-helpers';
import { eventually } from '../../helpers/eventually';
import { startHost, type TestHost } from '../../helpers/host';

// An outside API (a pet store) on a loopback port, described by an OpenAPI document.
const petDoc = {
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1' },
  paths: {
    '/pets/{petId}': {
      get: { operationId: 'getPet', parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'integer' } }, { name: 'verbose', in: 'query', schema: { type: 'boolean' } }], responses: { '200': { description: 'a pet', content: { 'application/json': { schema: { type: 'object' } } } } } },
    },
    '/pets': {
      post: { operationId: 'addPet', requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, age: { type: 'integer' } }, additionalProperties: false } } } }, responses: { '201': { description: 'created' } } },
    },
    '/broken': { get: { operationId: 'broken', responses: { '200': { description: 'never' } } } },
  },
};

describe('workflow steps that call imported OpenAPI operations (kernel "http")', () => {
  let t: TestHost;
  let server: http.Server;
  let base: string;
  const seen: Array<{ method: string; url: string; body: string }> = [];
  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, body });
        res.setHeader('content-type', 'application/json');
        if (req.url === '/broken') return res.writeHead(500).end('{"error":"down"}');
        if (req.method === 'GET' && req.url!.startsWith('/pets/7')) return res.end(JSON.stringify({ id: 7, name: 'Rex', age: 3 }));
        if (req.method === 'GET') return res.writeHead(404).end('{"error":"no such pet"}');
        const pet = JSON.parse(body) as Record<string, unknown>;
        res.writeHead(201).end(JSON.stringify({ id: 8, ...pet }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = await startHost({
      plugins: [interop, workflows],
      config: { interop: { allowedHosts: ['127.0.0.1'] }, mesh: { kernelDirs: [BUILTIN_KERNELS], only: ['analytics'] } },
    });
    const imp = await t.request('POST', '/interop/import/openapi3', { body: { name: 'pets', base_url: base, document: petDoc } });
    expect(imp.status).to.equal(201);
  });
  after(async () => {
    await t.stop();
    server.close();
  });

  const runToEnd = async (steps: unknown[]) => {
    const def = await t.request('POST', '/workflows', { body: { name: 'pets', steps } });
    expect(def.status, JSON.stringify(def.body)).to.equal(201);
    const exec = await t.request('POST', `/workflows/${def.body.id}/run`);
    expect(exec.status).to.equal(202);
    return eventually(async () => {
      const x = await t.request('GET', `/ops/workflows/${exec.body.id}`);
      return ['succeeded', 'failed'].includes(x.body.state) ? x.body : null;
    });
  };

  it('calls the operations with path, query and a checked body, and passes outputs on to later steps', async () => {
    seen.length = 0;
    const done = await runToEnd([
      { id: 'get', kernel: 'http', task: 'pets.getPet', input: { path: { petId: 7 }, query: { verbose: true } } },
      { id: 'copy', kernel: 'http', task: 'pets.addPet', input: { body: { name: '${steps.get.output.body.name} II', age: '${steps.get.output.body.age}' } } },
      { id: 'stats', kernel: 'analytics', task: 'describe', input: { values: ['${steps.copy.output.body.age}', 5] } },
    ]);
    expect(done.state, done.error).to.equal('succeeded');
    expect(done.steps[0]).to.include({ kernel: 'http', task: 'pets.getPet', state: 'succeeded' });
    expect(done.steps[0].output).to.deep.equal({ status: 200, content_type: 'application/json', body: { id: 7, name: 'Rex', age: 3 } });
    expect(done.steps[1].output.body).to.deep.equal({ id: 8, name: 'Rex II', age: 3 });
    expect(done.steps[2].output.count).to.equal(2);
    expect(seen).to.deep.equal([
      { method: 'GET', url: '/pets/7?verbose=true', body: '' },
      { method: 'POST', url: '/pets', body: '{"name":"Rex II","age":3}' },
    ]);
  });

  it('refuses a malformed http step when the definition is stored (422 naming the step)', async () => {
    const bad = await t.request('POST', '/workflows', { body: { name: 'x', steps: [{ id: 'a', kernel: 'http', task: 'no-dot', input: { path: { petId: 1 }, cookies: {} } }] } });
    expect(bad.status).to.equal(422);
    expect(bad.body.detail.map((d: any) => d.loc.join('.'))).to.deep.equal(['body.steps.0.task', 'body.steps.0.input.cookies']);
    const nested = await t.request('POST', '/workflows', { body: { name: 'x', steps: [{ id: 'a', kernel: 'http', task: 'pets.getPet', input: { path: { petId: { deep: 1 } } } }] } });
    expect(nested.status).to.equal(422);
    expect(nested.body.detail[0].loc).to.deep.equal(['body', 'steps', 0, 'input', 'path', 'petId']);
  });

  it("fails the step with the reason: a body against the schema, a missing parameter, an unknown operation, a 4xx, a 5xx after retries", async () => {
    const cases: Array<[unknown, RegExp, number]> = [
      [{ id: 's', kernel: 'http', task: 'pets.addPet', input: { body: { name: 'x', colour: 'red' } } }, /does not match the operation's schema/, 0],
      [{ id: 's', kernel: 'http', task: 'pets.getPet', input: {} }, /missing path parameter "petId"/, 0],
      [{ id: 's', kernel: 'http', task: 'pets.feedPet', input: {} }, /no imported operation "feedPet" of API "pets"/, 0],
      [{ id: 's', kernel: 'http', task: 'pets.getPet', input: { path: { petId: 99 } } }, /answered 404/, 1],
      [{ id: 's', kernel: 'http', task: 'pets.broken', retries: 2, input: {} }, /answered 500/, 3],
    ];
    for (const [step, why, calls] of cases) {
      seen.length = 0;
      const done = await runToEnd([step]);
      expect(done.state).to.equal('failed');
      expect(done.steps[0].error).to.match(why);
      expect(seen, JSON.stringify(step)).to.have.length(calls);
      expect(done.steps[0].attempts).to.equal(Math.max(1, calls));
    }
  });

  it('refuses a parameter whose reference resolved to an object, calling nothing for that step', async () => {
    seen.length = 0;
    const done = await runToEnd([
      { id: 'get', kernel: 'http', task: 'pets.getPet', input: { path: { petId: 7 } } },
      { id: 'again', kernel: 'http', task: 'pets.getPet', input: { path: { petId: '${steps.get.output.body}' } } },
    ]);
    expect(done.state).to.equal('failed');
    expect(done.steps[1].error).to.match(/^path parameter "petId" must be a string, number or boolean/);
    expect(seen).to.have.length(1);
  });

  it('calls no host outside interop.allowedHosts', async () => {
    const hosts = t.host.services.config.interop.allowedHosts;
    hosts.splice(0, hosts.length, 'api.example.com');
    try {
      seen.length = 0;
      const done = await runToEnd([{ id: 's', kernel: 'http', task: 'pets.getPet', input: { path: { petId: 7 } } }]);
      expect(done.state).to.equal('failed');
      expect(done.steps[0].error).to.contain('is not in interop.allowedHosts');
      expect(seen).to.have.length(0);
    } finally {
      hosts.splice(0, hosts.length, '127.0.0.1');
    }
  });

  it("uses only the caller's tenant's imported operations", async () => {
    const acme = (await t.userToken('member', 'acme')).token;
    const def = await t.request('POST', '/workflows', { token: acme, body: { name: 'acme', steps: [{ id: 's', kernel: 'http', task: 'pets.getPet', input: { path: { petId: 7 } } }] } });
    const exec = await t.request('POST', `/workflows/${def.body.id}/run`, { token: acme });
    const done = await eventually(async () => {
      const x = await t.request('GET', `/ops/workflows/${exec.body.id}`, { token: acme });
      return ['succeeded', 'failed'].includes(x.body.state) ? x.body : null;
    });
    expect(done.steps[0].error).to.match(/no imported operation "getPet" of API "pets" in this tenant/);
  });
});
