import { z } from 'zod';
import { defineKernel, task } from '../sdk';

const message = z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string().max(200_000) });
const dims = z.number().int().min(8).max(4096).default(256);

export default defineKernel({
  domain: 'llm',
  description: 'Token counting, prompt rendering, cost estimation, feature-hashed embeddings and similarity; completion through a configured OpenAI-compatible endpoint',
  nodes: 2,
  threadsPerNode: 1,
  slo: { latency_p95_ms: 2000, error_rate: 0.02 },
  // The OpenAI-compatible endpoint `complete` calls (config mesh.settings.llm, from LLM_* variables).
  settings: z.object({
    base_url: z.url().optional(),
    api_key: z.string().min(1).optional(),
    model: z.string().min(1).max(128).optional(),
    timeout_ms: z.number().int().min(100).max(600_000).optional(),
  }).strict(),
  tasks: {
    count_tokens: task({
      summary: "Tokens of a text with the model's BPE encoding (o200k_base when no model is named); an estimate, marked exact: false, for models without a published tokenizer",
      input: z.object({ text: z.string().max(1_000_000), model: z.string().min(1).max(128).optional() }),
      output: z.object({ tokens: z.number().int(), words: z.number().int(), characters: z.number().int(), method: z.string(), exact: z.boolean() }),
    }),
    render_prompt: task({
      summary: 'Fills the {{name}} variables of a template; strict mode refuses missing ones',
      input: z.object({ template: z.string().max(200_000), variables: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}), strict: z.boolean().default(true), model: z.string().min(1).max(128).optional() }),
      output: z.object({ prompt: z.string(), used: z.array(z.string()), missing: z.array(z.string()), tokens: z.number().int() }),
    }),
    estimate_cost: task({
      summary: "Cost of a call from the model's prices per million input and output tokens (registry data the caller passes: /aiops/models)",
      input: z.object({
        model: z.string().min(1).max(128),
        price: z.object({ input_per_million: z.number().min(0).max(1e6), output_per_million: z.number().min(0).max(1e6), currency: z.string().regex(/^[A-Z]{3}$/).default('USD') }),
        input_tokens: z.number().int().min(0).optional(),
        prompt: z.string().max(1_000_000).optional(),
        output_tokens: z.number().int().min(0).default(0),
      }),
      output: z.object({ model: z.string(), currency: z.string(), input_tokens: z.number().int(), output_tokens: z.number().int(), token_method: z.string(), input_cost: z.number(), output_cost: z.number(), total_cost: z.number() }),
    }),
    embed: task({
      summary: 'Feature-hashed embeddings (word unigrams and bigrams, signed hashing, L2-normalised)',
      input: z.object({ texts: z.array(z.string().max(100_000)).min(1).max(1000), dimensions: dims }),
      output: z.object({ dimensions: z.number().int(), vectors: z.array(z.array(z.number())) }),
    }),
    similarity: task({
      summary: 'Ranks documents by cosine similarity of their hashed embeddings to a query',
      input: z.object({ query: z.string().min(1).max(100_000), documents: z.array(z.string().max(100_000)).min(1).max(1000), dimensions: dims, top_k: z.number().int().min(1).max(1000).default(10) }),
      output: z.object({ results: z.array(z.object({ index: z.number().int(), score: z.number() })) }),
    }),
    complete: task({
      summary: 'Chat completion through the configured OpenAI-compatible endpoint (503 when none is configured)',
      input: z.object({ messages: z.array(message).min(1).max(200), model: z.string().max(128).optional(), max_tokens: z.number().int().min(1).max(32_768).optional(), temperature: z.number().min(0).max(2).optional() }),
      output: z.object({ content: z.string(), model: z.string(), finish_reason: z.string().nullable(), usage: z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() }).nullable() }),
    }),
  },
});
