import type { ChatAnswer, ChatRequest, LlmClient } from '../../core/contracts/llm';
import { HttpError, NotConfigured } from '../../core/errors';

export interface Endpoint {
  base_url?: string;
  api_key?: string;
  model?: string;
  timeout_ms?: number;
}

interface Completion {
  model?: string;
  choices?: Array<{ message?: ChatAnswer['message']; finish_reason?: string | null; logprobs?: { content?: Array<{ logprob: number }> } | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/** An OpenAI-compatible chat completions client (the same endpoint the llm kernel calls). */
export class OpenAiCompatible implements LlmClient {
  constructor(private readonly ep: Endpoint) {}

  configured(): boolean {
    return Boolean(this.ep.base_url);
  }

  model(): string | null {
    return this.ep.model ?? null;
  }

  async chat(req: ChatRequest): Promise<ChatAnswer> {
    if (!this.ep.base_url) throw new NotConfigured('mesh.settings.llm.base_url (LLM_BASE_URL)', 'No LLM endpoint');
    const model = req.model ?? this.ep.model;
    if (!model) throw new NotConfigured('mesh.settings.llm.model (LLM_MODEL)', 'No LLM model');
    const started = performance.now();
    let res: Response;
    try {
      res = await fetch(`${this.ep.base_url.replace(/\/$/, '')}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.ep.api_key ? { authorization: `Bearer ${this.ep.api_key}` } : {}) },
        body: JSON.stringify({
          model,
          messages: req.messages,
          ...(req.tools?.length ? { tools: req.tools, tool_choice: 'auto' } : {}),
          ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
          ...(req.logprobs ? { logprobs: true } : {}),
          ...(req.maxTokens ? { max_tokens: req.maxTokens } : {}),
        }),
        signal: AbortSignal.timeout(this.ep.timeout_ms ?? 60_000),
      });
    } catch (err) {
      throw new HttpError(502, `The LLM endpoint could not be reached: ${(err as Error).message}`, {}, 'LLM_UNREACHABLE');
    }
    const text = await res.text();
    if (!res.ok) throw new HttpError(502, `The LLM endpoint answered ${res.status}: ${text.slice(0, 200)}`, {}, 'LLM_FAILED');
    let body: Completion;
    try {
      body = JSON.parse(text) as Completion;
    } catch {
      throw new HttpError(502, 'The LLM endpoint answered something that is not JSON', {}, 'LLM_FAILED');
    }
    const choice = body.choices?.[0];
    if (!choice?.message) throw new HttpError(502, 'The LLM endpoint answered no choice', {}, 'LLM_FAILED');
    const lps = choice.logprobs?.content?.map((c) => c.logprob).filter((x) => Number.isFinite(x)) ?? [];
    return {
      model: body.model ?? model,
      message: { role: 'assistant', content: choice.message.content ?? null, ...(choice.message.tool_calls?.length ? { tool_calls: choice.message.tool_calls } : {}) },
      finish_reason: choice.finish_reason ?? null,
      usage: body.usage ? { prompt_tokens: body.usage.prompt_tokens ?? 0, completion_tokens: body.usage.completion_tokens ?? 0 } : null,
      mean_logprob: lps.length ? lps.reduce((a, b) => a + b, 0) / lps.length : null,
      latency_ms: Math.round((performance.now() - started) * 100) / 100,
    };
  }
}
