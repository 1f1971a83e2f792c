import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestHost } from '../helpers/host';
import { startMeshHost } from '../core/mesh-helpers';

describe('llm kernel', () => {
  let t: TestHost;
  before(async () => {
    t = await startMeshHost(['llm']);
  });
  after(() => t.stop());
  const run = (task: string, body: unknown, host = t) => host.request('POST', `/kernels/llm/tasks/${task}`, { body });

  it('counts tokens with the BPE encodings, renders prompts and estimates cost from given prices', async () => {
    // o200k_base: Hello| world|,| hello| tokens|! (checked against OpenAI's tiktoken).
    const c = await run('count_tokens', { text: 'Hello world, hello tokens!', model: 'gpt-4o' });
    expect(c.body.output).to.include({ words: 4, characters: 26, tokens: 6, method: 'bpe:o200k_base', exact: true });
    const old = await run('count_tokens', { text: 'Hello world, hello tokens!', model: 'gpt-4' });
    expect(old.body.output).to.include({ tokens: 6, method: 'bpe:cl100k_base', exact: true });
    const unknown = await run('count_tokens', { text: 'Hello world, hello tokens!', model: 'claude-3-5-haiku' });
    expect(unknown.body.output).to.include({ method: 'estimate:pretokenizer', exact: false });
    const p = await run('render_prompt', { template: 'Hi {{ name }}, you owe {{amount}}.', variables: { name: 'Ada', amount: 3 } });
    expect(p.body.output).to.include({ prompt: 'Hi Ada, you owe 3.' });
    expect(p.body.output.missing).to.deep.equal([]);
    const strict = await run('render_prompt', { template: '{{a}} {{b}}', variables: { a: 1 } });
    expect(strict.status).to.equal(422);
    expect(strict.body.detail[0].msg).to.match(/without a value: b/);
    const loose = await run('render_prompt', { template: '{{a}} {{b}}', variables: { a: 1 }, strict: false });
    expect(loose.body.output).to.include({ prompt: '1 {{b}}' });
    const price = { input_per_million: 2.5, output_per_million: 10 };
    const cost = await run('estimate_cost', { model: 'gpt-4o', price, input_tokens: 1_000_000, output_tokens: 500_000 });
    expect(cost.body.output).to.include({ input_cost: 2.5, output_cost: 5, total_cost: 7.5, currency: 'USD', token_method: 'given' });
    const fromPrompt = await run('estimate_cost', { model: 'gpt-4o', price, prompt: 'Hello world, hello tokens!' });
    expect(fromPrompt.body.output).to.include({ input_tokens: 6, token_method: 'bpe:o200k_base' });
    expect((await run('estimate_cost', { model: 'gpt-4o', input_tokens: 1 })).status).to.equal(422);
  });

  it('counts a million repeats of one letter in one request (js-tiktoken alone held the worker for minutes)', async () => {
    const c = await run('count_tokens', { text: 'y'.repeat(1_000_000), model: 'gpt-4o' });
    expect(c.status).to.equal(200);
    expect(c.body.output).to.include({ tokens: 250_000, characters: 1_000_000, method: 'bpe:o200k_base', exact: true });
  });

  it('embeds by feature hashing and ranks by cosine similarity', async () => {
    const e = await run('embed', { texts: ['the cat sat', 'the cat sat'], dimensions: 64 });
    expect(e.body.output.vectors[0]).to.have.length(64);
    expect(e.body.output.vectors[0]).to.deep.equal(e.body.output.vectors[1]);
    const norm = Math.hypot(...e.body.output.vectors[0]);
    expect(norm).to.be.closeTo(1, 1e-9);
    const s = await run('similarity', { query: 'cat on the mat', documents: ['stock prices fell', 'a cat on a mat', 'weather today'], top_k: 2 });
    expect(s.body.output.results[0].index).to.equal(1);
    expect(s.body.output.results).to.have.length(2);
  });

  it('answers 503 for completion when no endpoint is configured', async () => {
    const r = await run('complete', { messages: [{ role: 'user', content: 'hi' }] });
    expect(r.status).to.equal(503);
    expect(r.body.detail).to.match(/no LLM endpoint is configured/);
    expect((await run('complete', { messages: [] })).status).to.equal(422);
  });

  it('completes through a configured OpenAI-compatible endpoint', async () => {
    const seen: any[] = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        seen.push({ url: req.url, auth: req.headers.authorization, body: JSON.parse(body) });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ model: 'local-model', choices: [{ message: { role: 'assistant', content: 'hello back' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    const h = await startMeshHost(['llm'], { settings: { llm: { base_url: `http://127.0.0.1:${port}/v1`, api_key: 'k-123', model: 'local-model' } } });
    try {
      const r = await run('complete', { messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }, h);
      expect(r.status).to.equal(200);
      expect(r.body.output).to.deep.equal({ content: 'hello back', model: 'local-model', finish_reason: 'stop', usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
      expect(seen[0]).to.deep.include({ url: '/v1/chat/completions', auth: 'Bearer k-123' });
      expect(seen[0].body).to.deep.include({ model: 'local-model', max_tokens: 5 });
    } finally {
      await h.stop();
      server.close();
    }
  });
});
