import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { llmRef } from '../../core/contracts/llm';
import { HttpError } from '../../core/errors';
import { startHost, type TestHost } from '../helpers/host';

describe('llm plugin: the OpenAI-compatible client', () => {
  let server: http.Server;
  let base: string;
  const seen: Array<Record<string, unknown>> = [];
  before(async () => {
    server = http.createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(text) as Record<string, unknown>;
        seen.push({ path: req.url, auth: req.headers.authorization, ...body });
        if (body.model === 'broken') {
          res.writeHead(500).end('overloaded');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            model: body.model,
            choices: [
              {
                message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_kernels', arguments: '{}' } }] },
                finish_reason: 'tool_calls',
                logprobs: { content: [{ logprob: -0.1 }, { logprob: -0.3 }] },
              },
            ],
            usage: { prompt_tokens: 12, completion_tokens: 5 },
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('sends the messages and tools and reads the tool calls, usage and mean log-probability', async () => {
    const t: TestHost = await startHost({ config: { mesh: { settings: { llm: { base_url: base, api_key: 'k-1', model: 'small' } } } } });
    try {
      const llm = t.host.service(llmRef);
      expect(llm.configured()).to.equal(true);
      const a = await llm.chat({
        messages: [{ role: 'user', content: 'which kernels run?' }],
        tools: [{ type: 'function', function: { name: 'list_kernels', description: 'the kernels', parameters: { type: 'object', properties: {} } } }],
        logprobs: true,
      });
      expect(a.model).to.equal('small');
      expect(a.finish_reason).to.equal('tool_calls');
      expect(a.message.tool_calls?.[0].function.name).to.equal('list_kernels');
      expect(a.usage).to.deep.equal({ prompt_tokens: 12, completion_tokens: 5 });
      expect(a.mean_logprob).to.be.closeTo(-0.2, 1e-9);
      const sent = seen[seen.length - 1];
      expect(sent.path).to.equal('/v1/chat/completions');
      expect(sent.auth).to.equal('Bearer k-1');
      expect(sent.tool_choice).to.equal('auto');
      const err = await llm.chat({ model: 'broken', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(HttpError);
      expect((err as HttpError).status).to.equal(502);
      expect((err as HttpError).code).to.equal('LLM_FAILED');
    } finally {
      await t.stop();
    }
  });

  it('answers 503 NOT_CONFIGURED, naming the setting, when no endpoint is set', async () => {
    const t = await startHost();
    try {
      const llm = t.host.service(llmRef);
      expect(llm.configured()).to.equal(false);
      const err = (await llm.chat({ messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)) as HttpError;
      expect(err.status).to.equal(503);
      expect(err.body()).to.include({ code: 'NOT_CONFIGURED', config_key: 'mesh.settings.llm.base_url (LLM_BASE_URL)' });
    } finally {
      await t.stop();
    }
  });
});
