// The LLM client other plugins use (copilot, proposals, ...): an OpenAI-compatible chat
// completions endpoint with tool calling. Provided by plugins/llm.
import { createServiceRef } from '../plugin';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  /** On an assistant message that asked for tools. */
  tool_calls?: ToolCall[];
  /** On a tool message: the call it answers. */
  tool_call_id?: string;
  name?: string;
}

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A tool the model may call: a JSON Schema of its arguments. */
export interface ToolSpec {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** Defaults to the configured model. */
  model?: string;
  temperature?: number;
  /** Ask for token log-probabilities (used to derive a confidence). */
  logprobs?: boolean;
  maxTokens?: number;
}

export interface ChatAnswer {
  model: string;
  message: ChatMessage;
  finish_reason: string | null;
  usage: { prompt_tokens: number; completion_tokens: number } | null;
  /** Mean token log-probability of the answer, when asked for and returned. */
  mean_logprob: number | null;
  latency_ms: number;
}

export interface LlmClient {
  /** True when an endpoint is configured. */
  configured(): boolean;
  /** The configured model, or null. */
  model(): string | null;
  /** One chat completion; 503 NOT_CONFIGURED without an endpoint, 502 when the endpoint fails. */
  chat(req: ChatRequest): Promise<ChatAnswer>;
}

export const llmRef = createServiceRef<LlmClient>('llm.client');
