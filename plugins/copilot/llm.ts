// The llm plugin's client (core/contracts/llm.ts) as the copilot's model client.
import type { LlmClient, ToolSpec } from '../../core/contracts/llm';
import type { ModelClient } from './model';

export function modelClient(llm: LlmClient): ModelClient {
  return {
    configured: () => llm.configured(),
    complete: async (messages, tools) => {
      const a = await llm.chat({ messages, tools: tools as ToolSpec[], logprobs: true, temperature: 0 });
      return { message: a.message, logprobs: a.mean_logprob === null ? null : [a.mean_logprob], model: a.model };
    },
  };
}
