// One turn of a copilot conversation. A pending confirmation is settled first; otherwise the
// model plans (with llm.endpoint configured) or the intent parser does. Every tool call is
// run as the caller (role checked), mutating ones only when confirmed. The turn is stored
// with its reasoning steps and actions, and written as an insight chain of agent `copilot`.
import type { Caller } from '../../core/roles';
import type { InsightStore, Observation } from '../../core/contracts/insights';
import { CANCEL, CAPABILITIES, CONFIRM, parseIntent } from './intents';
import { modelTurn, type ModelClient } from './model';
import type { Conversations, Pending } from './store';
import { runTool, toolByName, type StepResult, type ToolContext } from './tools';

export interface ChatReply {
  response: string;
  conversation_id: string;
  reasoning_steps: Array<Record<string, unknown>>;
  actions_taken: Array<Record<string, unknown>>;
  confidence: number | null;
  pending_confirmation: Pending | null;
  chain_id: string | null;
}

export const COPILOT_AGENT = 'copilot';

export async function chat(
  deps: { ctx: ToolContext; conversations: Conversations; insights: InsightStore; llm: ModelClient; clock: { now(): Date } },
  caller: Caller,
  body: { message: string; conversation_id?: string; confirm?: boolean },
): Promise<ChatReply> {
  const now = () => deps.clock.now().toISOString();
  const conv = await deps.conversations.open(caller.tenantId, caller.id, body.conversation_id, now());
  await deps.conversations.add(caller.tenantId, conv.id, { role: 'user', user_id: caller.id, content: body.message, reasoning_steps: null, actions_taken: null, confidence: null, chain_id: null, created_at: now() });

  const steps: Array<Record<string, unknown>> = [];
  const results: StepResult[] = [];
  let response: string;
  let confidence: number | null;
  let pending: Pending | null = conv.pending;

  const call = async (tool: string, args: unknown, confirmed: boolean) => {
    const r = await runTool(deps.ctx, caller, tool, args, confirmed);
    steps.push({ step: steps.length + 1, type: 'tool_call', tool: r.tool, args: r.args, status: r.status, result: r.result, error: r.error });
    results.push(r);
    if (r.status === 'needs_confirmation') pending = { tool: r.tool, args: r.args };
    return r;
  };

  if (conv.pending && CONFIRM.test(body.message)) {
    steps.push({ step: 1, type: 'confirmation', pending: conv.pending });
    pending = null;
    const r = await call(conv.pending.tool, conv.pending.args, true);
    response = r.said;
    confidence = 1;
  } else if (conv.pending && CANCEL.test(body.message)) {
    steps.push({ step: 1, type: 'confirmation', pending: conv.pending, cancelled: true });
    pending = null;
    response = `Cancelled: ${conv.pending.tool} was not run.`;
    confidence = 1;
  } else {
    // A new request replaces an unconfirmed one.
    pending = null;
    if (deps.llm.configured()) {
      const turn = await modelTurn(deps.llm, deps.conversations, caller, conv.id, body.message, steps, (tool, args) => call(tool, args, !!body.confirm));
      response = turn.response;
      confidence = turn.confidence;
    } else {
      const kernels = [...deps.ctx.mesh.kernelMap.keys()];
      const intent = parseIntent(body.message, kernels);
      steps.push({ step: 1, type: 'intent', method: 'pattern match (no language model: llm.endpoint is not configured)', tool: intent?.tool ?? null, args: intent?.args ?? null, matched: intent?.matched ?? null, confidence: intent?.confidence ?? 0 });
      if (!intent) {
        response = `I can't answer that: without a language model (llm.endpoint is not configured) I understand only a few requests. I can ${CAPABILITIES}.`;
        confidence = 0;
      } else {
        const r = await call(intent.tool, intent.args, !!body.confirm);
        response = r.said;
        confidence = intent.confidence;
      }
    }
  }

  const actions = results.filter((r) => r.status === 'ok' && toolByName.get(r.tool)?.mutating).map((r) => ({ tool: r.tool, args: r.args, result: r.result }));
  const chain = await writeChain(deps.insights, caller, body.message, response, results, actions.length > 0, now());
  await deps.conversations.setPending(caller.tenantId, conv.id, pending, now());
  await deps.conversations.add(caller.tenantId, conv.id, { role: 'assistant', user_id: null, content: response, reasoning_steps: steps, actions_taken: actions, confidence, chain_id: chain?.id ?? null, created_at: now() });
  return { response, conversation_id: conv.id, reasoning_steps: steps, actions_taken: actions, confidence, pending_confirmation: pending, chain_id: chain?.id ?? null };
}

/** The turn as a chain: tool results are its observations, the answer its recommendation. */
async function writeChain(insights: InsightStore, caller: Caller, question: string, answer: string, results: StepResult[], acted: boolean, at: string) {
  if (!results.length) return null;
  const observations: Observation[] = results.map((r, i) => {
    const m = r.status === 'ok' ? toolByName.get(r.tool)?.metric?.(r.args as Record<string, any>, r.result) : null;
    return m ? { id: `o${i + 1}`, metric: m.metric, params: m.params, value: m.value, detail: r.result, at } : { id: `o${i + 1}`, metric: `tool:${r.tool}`, params: r.args, value: null, detail: { status: r.status, result: r.result, error: r.error }, at };
  });
  return insights.record({
    tenant_id: caller.tenantId,
    agent_id: COPILOT_AGENT,
    topic: 'copilot',
    summary: question.slice(0, 500),
    observations,
    inferences: [{ id: 'i1', text: answer.slice(0, 2000), from: observations.map((o) => o.id), rule: null }],
    recommendation: null,
    decision: { state: acted ? 'applied' : 'answered', by: caller.id, at },
  });
}
