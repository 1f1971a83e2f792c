import { serve } from '../runtime';
import { TaskInputError, TaskUnavailableError } from '../sdk';
import { cosine, embed, words } from './lib';
import { countTokens } from './tokens';
import manifest from './manifest';

interface Endpoint {
  base_url?: string;
  api_key?: string;
  model?: string;
  timeout_ms?: number;
}

export = serve(manifest, {
  count_tokens: ({ text, model }) => ({ ...countTokens(text, model), words: words(text).length, characters: [...text].length }),
  render_prompt: ({ template, variables, strict, model }) => {
    const used = new Set<string>();
    const missing = new Set<string>();
    const prompt = template.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g, (whole, name: string) => {
      if (name in variables) {
        used.add(name);
        return String(variables[name]);
      }
      missing.add(name);
      return whole;
    });
    if (strict && missing.size) throw new TaskInputError(`template variables without a value: ${[...missing].join(', ')}`, ['variables']);
    return { prompt, used: [...used], missing: [...missing], tokens: countTokens(prompt, model).tokens };
  },
  estimate_cost: ({ model, price, input_tokens, prompt, output_tokens }) => {
    if (input_tokens === undefined && prompt === undefined) throw new TaskInputError('give input_tokens or prompt', ['input_tokens']);
    const counted = input_tokens === undefined ? countTokens(prompt!, model) : null;
    const inTokens = input_tokens ?? counted!.tokens;
    const input_cost = (inTokens * price.input_per_million) / 1e6;
    const output_cost = (output_tokens * price.output_per_million) / 1e6;
    return { model, currency: price.currency, input_tokens: inTokens, output_tokens, token_method: counted ? counted.method : 'given', input_cost, output_cost, total_cost: input_cost + output_cost };
  },
  embed: ({ texts, dimensions }) => ({ dimensions, vectors: texts.map((t) => embed(t, dimensions)) }),
  similarity: ({ query, documents, dimensions, top_k }) => {
    const q = embed(query, dimensions);
    const results = documents.map((d, index) => ({ index, score: cosine(q, embed(d, dimensions)) }));
    results.sort((a, b) => b.score - a.score || a.index - b.index);
    return { results: results.slice(0, top_k) };
  },
  complete: async ({ messages, model, max_tokens, temperature }, ctx) => {
    const ep = ctx.settings as Endpoint;
    if (!ep.base_url) throw new TaskUnavailableError('no LLM endpoint is configured (set LLM_BASE_URL to an OpenAI-compatible API)');
    const useModel = model ?? ep.model;
    if (!useModel) throw new TaskInputError('no model given and no default model configured (LLM_MODEL)', ['model']);
    let res: Response;
    try {
      res = await fetch(`${ep.base_url.replace(/\/$/, '')}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(ep.api_key ? { authorization: `Bearer ${ep.api_key}` } : {}) },
        body: JSON.stringify({ model: useModel, messages, max_tokens, temperature }),
        signal: AbortSignal.timeout(ep.timeout_ms ?? 60_000),
      });
    } catch (err) {
      throw new TaskUnavailableError(`the LLM endpoint cannot be reached: ${(err as Error).message}`);
    }
    const text = await res.text();
    if (!res.ok) throw new TaskUnavailableError(`the LLM endpoint answered ${res.status}: ${text.slice(0, 300)}`);
    let body: { model?: string; choices?: Array<{ message?: { content?: string }; finish_reason?: string | null }>; usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } };
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error('the LLM endpoint answered something that is not JSON');
    }
    const choice = body.choices?.[0];
    if (typeof choice?.message?.content !== 'string') throw new Error('the LLM endpoint answered without choices[0].message.content');
    return { content: choice.message.content, model: body.model ?? useModel, finish_reason: choice.finish_reason ?? null, usage: body.usage ?? null };
  },
}, {
  // A node with an endpoint must reach it: GET <base_url>/models answers 2xx (OpenAI-compatible APIs list models there).
  selfTest: async (ctx) => {
    const ep = ctx.settings as Endpoint;
    if (!ep.base_url) return 'no endpoint configured: complete answers 503 until one is';
    const url = `${ep.base_url.replace(/\/$/, '')}/models`;
    let res: Response;
    try {
      res = await fetch(url, { headers: ep.api_key ? { authorization: `Bearer ${ep.api_key}` } : {}, signal: AbortSignal.timeout(Math.min(ep.timeout_ms ?? 5000, 5000)) });
    } catch (err) {
      throw new Error(`the LLM endpoint ${ep.base_url} cannot be reached: ${(err as Error).message}`);
    }
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`the LLM endpoint answered ${res.status} to GET ${url}`);
    return `GET ${url} answered ${res.status}`;
  },
});
