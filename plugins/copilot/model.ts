// The copilot with a language model: OpenAI-compatible tool calling through the llm plugin's
// client. The model sees the tools (the same ones the intent parser uses, as JSON schemas)
// and the conversation; each tool call it makes is run as the caller and its result handed
// back, up to MAX_ROUNDS rounds. Confidence: the mean token probability exp(mean logprob) of
// the final answer when the endpoint returns logprobs, else null (nothing to base it on).
import { z } from 'zod';
import type { Caller } from '../../core/roles';
import type { Conversations } from './store';
import { TOOLS, type StepResult } from './tools';

const MAX_ROUNDS = 5;
const HISTORY = 20;

export interface ModelMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export interface ModelClient {
  configured(): boolean;
  complete(messages: ModelMessage[], tools: unknown[]): Promise<{ message: ModelMessage; logprobs: number[] | null; model: string | null }>;
}

const SYSTEM = 'You are the copilot of a platform control service. Answer questions about the live platform using the tools; act only through the tools. A tool result with status "needs_confirmation" means the user must confirm: tell them what will happen and stop. A result with status "forbidden" means the user lacks the role: say so plainly. Be brief and exact; never invent figures.';

export function toolSpecs() {
  return TOOLS.map((t) => ({ type: 'function', function: { name: t.name, description: `${t.description} (needs role ${t.role}${t.mutating ? '; changes the platform' : ''})`, parameters: z.toJSONSchema(t.params) } }));
}

/** Model steps go into `steps` in order with the tool-call steps `call` adds. */
export async function modelTurn(llm: ModelClient, conversations: Conversations, caller: Caller, conversationId: string, message: string, steps: Array<Record<string, unknown>>, call: (tool: string, args: unknown) => Promise<StepResult>) {
  const past = (await conversations.history(caller.tenantId, conversationId)).messages.slice(-HISTORY - 1, -1);
  const messages: ModelMessage[] = [{ role: 'system', content: `${SYSTEM} The user is a ${caller.role}.` }, ...past.map((m) => ({ role: m.role, content: m.content }) as ModelMessage), { role: 'user', content: message }];
  const tools = toolSpecs();
  for (let round = 1; round <= MAX_ROUNDS; round++) {
    const { message: reply, logprobs, model } = await llm.complete(messages, tools);
    steps.push({ step: steps.length + 1, type: 'model', model, round, content: reply.content, tool_calls: (reply.tool_calls ?? []).map((c) => ({ name: c.function.name, arguments: c.function.arguments })) });
    if (!reply.tool_calls?.length) {
      const confidence = logprobs && logprobs.length ? Math.round(Math.exp(logprobs.reduce((a, b) => a + b, 0) / logprobs.length) * 1000) / 1000 : null;
      return { response: reply.content ?? '', confidence };
    }
    messages.push({ role: 'assistant', content: reply.content, tool_calls: reply.tool_calls });
    for (const c of reply.tool_calls) {
      let args: unknown = {};
      try {
        args = c.function.arguments ? JSON.parse(c.function.arguments) : {};
      } catch {
        args = { _unparsable: c.function.arguments };
      }
      const r = await call(c.function.name, args);
      messages.push({ role: 'tool', tool_call_id: c.id, content: JSON.stringify({ status: r.status, result: r.result, error: r.error, note: r.said }) });
      // A call that needs the user's word ends the turn: the user confirms in the next message.
      if (r.status === 'needs_confirmation') return { response: r.said, confidence: null };
    }
  }
  return { response: `I stopped after ${MAX_ROUNDS} rounds of tool calls without a final answer.`, confidence: null };
}
