import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { startHost, type TestHost } from '../../helpers/host';
import { settleDeployment } from './helpers';

// A deployment that changes a kernel's settings: the llm kernel's endpoint, served here by a
// real HTTP server speaking the two calls the kernel makes (GET /models, POST /chat/completions).
describe('automation: deployments that change kernel settings', function () {
  this.timeout(60_000);
  let h: TestHost;
  let operator: string;
  let server: http.Server;
  let base: string;
  let modelsStatus = 200;
  const seen: Array<{ path: string; auth: string | undefined; model?: string }> = [];

  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const model = body ? (JSON.parse(body) as { model?: string }).model : undefined;
        seen.push({ path: req.url ?? '', auth: req.headers.authorization, model });
        if (req.url === '/v1/models') {
          res.writeHead(modelsStatus, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ id: 'm1' }] }));
        } else if (req.url === '/v1/chat/completions') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ model, choices: [{ message: { content: 'hello' }, finish_reason: 'stop' }] }));
        } else res.writeHead(404).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    h = await startHost({ config: { mesh: { only: ['llm', 'analytics'] }, automation: { deployments: { gateProbes: 2, gateTimeoutMs: 5000 } } } });
    operator = (await h.userToken('operator')).token;
  });
  after(async () => {
    await h?.stop();
    server?.close();
  });

  const llmNodes = () => h.host.services.mesh.kernelOf('llm').nodes.filter((n) => n.state !== 'drained');
  const settle = (id: string, states: string[]) => settleDeployment(h, operator, id, states);
  const deploy = async (settings: Record<string, unknown>) => {
    const c = await h.request('POST', '/automation/deployments', { body: { kernel_id: 'llm', settings }, token: operator });
    expect(c.status, c.text).to.equal(201);
    return c.body as { id: string; target: { settings: Record<string, unknown> } };
  };

  it('refuses settings a kernel does not declare, or that do not match its schema', async () => {
    for (const body of [
      { kernel_id: 'analytics', settings: { x: 1 } },
      { kernel_id: 'llm', settings: { base_url: 'not a url' } },
      { kernel_id: 'llm', settings: { base_url: base, colour: 'red' } },
    ]) {
      const r = await h.request('POST', '/automation/deployments', { body, token: operator });
      expect(r.status, JSON.stringify(body)).to.equal(422);
      expect(r.body.code).to.equal('VALIDATION_ERROR');
    }
    expect((await h.host.services.db('automation_deployments')).length).to.equal(0);
  });

  it('rolls new settings out: self-test first, every node replaced, the secret sealed and hidden', async () => {
    const d = await deploy({ base_url: base, model: 'm1', api_key: 'sk-test-secret' });
    expect(d.target.settings).to.deep.equal({ base_url: base, model: 'm1', api_key: '(hidden)' });
    const row = await h.host.services.db('automation_deployments').where({ id: d.id }).first();
    expect(JSON.stringify(row)).to.not.contain('sk-test-secret');
    const v = await h.request('POST', `/automation/deployments/${d.id}/validate`, { token: operator });
    expect(v.body.state).to.equal('validated');
    const selfTest = v.body.validation.checks.find((c: { name: string }) => c.name === 'self_test');
    expect(selfTest).to.include({ ok: true });
    expect(selfTest.evidence).to.contain(`GET ${base}/models answered 200`);
    const before = llmNodes().map((n) => n.id);
    expect((await h.request('POST', `/automation/deployments/${d.id}/execute`, { token: operator })).status).to.equal(202);
    const done = await settle(d.id, ['succeeded', 'failed', 'rolled_back']);
    expect(done.state, done.reason).to.equal('succeeded');
    // Every node is new, and runs with the new settings.
    expect(llmNodes().map((n) => n.id).filter((id) => before.includes(id))).to.deep.equal([]);
    for (const n of llmNodes()) expect(n.opts.settings).to.deep.equal({ base_url: base, model: 'm1', api_key: 'sk-test-secret' });
    const gates = (done.steps as Array<{ action: string; gate: { reason: string } }>).filter((s) => s.action === 'add_node');
    expect(gates[0]!.gate.reason).to.contain('self-test: GET');
    const r = await h.request('POST', '/kernels/llm/tasks/complete', { body: { messages: [{ role: 'user', content: 'hi' }] }, token: operator });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.output.model).to.equal('m1');
    expect(seen.at(-1)).to.deep.equal({ path: '/v1/chat/completions', auth: 'Bearer sk-test-secret', model: 'm1' });
    // A node added later starts with what was rolled out.
    const added = await h.request('POST', '/mesh/nodes', { body: { kernel_id: 'llm' } });
    expect(added.status, added.text).to.equal(201);
    expect(h.host.services.mesh.nodeOf(added.body.id).node.opts.settings).to.include({ model: 'm1' });
  });

  it('rolls back to the previous settings by itself when the new nodes fail their self-test', async () => {
    const d = await deploy({ base_url: base, model: 'm2' });
    expect((await h.request('POST', `/automation/deployments/${d.id}/validate`, { token: operator })).body.state).to.equal('validated');
    // The endpoint breaks between validation and rollout: the first new node's gate fails.
    modelsStatus = 500;
    try {
      await h.request('POST', `/automation/deployments/${d.id}/execute`, { token: operator });
      const done = await settle(d.id, ['rolled_back', 'failed', 'succeeded']);
      expect(done.state, done.reason).to.equal('rolled_back');
      expect(done.reason).to.contain("the kernel's self-test failed: the LLM endpoint answered 500");
    } finally {
      modelsStatus = 200;
    }
    for (const n of llmNodes()) expect(n.opts.settings).to.include({ model: 'm1' });
    expect(h.host.services.mesh.kernelOf('llm').settings).to.include({ model: 'm1' });
  });

  it('marks a deployment invalid when the self-test fails with the new settings', async () => {
    const d = await deploy({ base_url: 'http://127.0.0.1:1/v1' });
    const v = await h.request('POST', `/automation/deployments/${d.id}/validate`, { token: operator });
    expect(v.body.state).to.equal('invalid');
    expect(v.body.reason).to.match(/^self_test: .*cannot be reached/);
  });
});
