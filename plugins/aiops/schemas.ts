import { z } from 'zod';
import { jobViewFields } from '../../core/jobs';
import { datasetSchema } from './dataset';
import { JOB_STATES } from './store';

export const page = {
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().min(1).max(512).optional(),
};
const iso = z.iso.datetime({ offset: true });
export const windowQuery = {
  since: iso.optional(),
  until: iso.optional(),
};
export const amount = z.union([z.number(), z.string().max(40)]);
export const currency = z.string().regex(/^[A-Z]{3}$/, 'a three-letter currency code');
const name = z.string().min(1).max(128).regex(/^[A-Za-z0-9][A-Za-z0-9._:/@-]*$/, 'letters, digits and . _ : / @ -');

export const priceBody = z.object({ input_per_million: amount, output_per_million: amount, currency: currency.default('USD') });
export const modelBody = z.object({
  name,
  version: z.string().min(1).max(64).regex(/^[A-Za-z0-9._-]+$/).optional(),
  provider: z.string().min(1).max(64),
  task: z.string().min(1).max(64),
  endpoint: z.url().max(2048).optional(),
  kernel: z.string().min(1).max(64).optional(),
  price: priceBody,
});
export const model = z.object({
  id: z.string(),
  tenant_id: z.string(),
  name: z.string(),
  version: z.string(),
  provider: z.string(),
  task: z.string(),
  endpoint: z.string().nullable(),
  kernel: z.string().nullable(),
  price: z.object({ input_per_million: z.string(), output_per_million: z.string(), currency: z.string() }),
  parameters: z.record(z.string(), z.unknown()).nullable(),
  training_job_id: z.string().nullable(),
  created_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
const pcts = z.object({ p50: z.number().nullable(), p95: z.number().nullable(), p99: z.number().nullable(), avg: z.number().nullable() });
export const evidence = z.object({
  model_id: z.string(),
  name: z.string(),
  version: z.string(),
  calls: z.number(),
  errors: z.number(),
  error_rate: z.number().nullable(),
  input_tokens: z.number(),
  output_tokens: z.number(),
  latency_ms: pcts,
  cost: z.object({ telemetry_usd: z.string(), priced: z.string(), currency: z.string(), per_call_usd: z.number().nullable(), per_call_source: z.enum(['telemetry', 'price']).nullable() }),
  evaluations: z.array(z.object({ metric: z.string(), count: z.number(), avg: z.number().nullable(), p50: z.number().nullable(), pass_rate: z.number().nullable() })),
});
export const windowOut = z.object({ since: z.string(), until: z.string() });
export const method = { method: z.string(), window: windowOut, inputs: z.array(z.string()) };

export const routeBody = z.object({
  task: z.string().min(1).max(64),
  max_latency_ms: z.number().positive().optional(),
  max_cost_usd: z.number().min(0).optional(),
  min_quality: z.number().optional(),
  quality_metric: z.string().min(1).max(128).optional(),
  prefer: z.enum(['cost', 'latency', 'quality']).default('cost'),
  /** Fewer measured calls than this in the window: not enough evidence to route to the model. */
  min_calls: z.number().int().min(1).max(1_000_000).default(1),
  window_hours: z.number().int().min(1).max(24 * 90).default(24),
});

export const jobBody = z.object({
  model_name: name,
  kind: z.enum(['linear', 'logistic']),
  dataset: datasetSchema,
  epochs: z.number().int().min(1).max(5000).default(20),
  epochs_per_task: z.number().int().min(1).max(100).default(5),
  learning_rate: z.number().gt(0).max(10).default(0.1),
  l2: z.number().min(0).max(10).default(0),
  validation_share: z.number().min(0).max(0.5).default(0.2),
});
const epochOut = z.object({ epoch: z.number(), loss: z.number(), validation_loss: z.number().nullable(), metric: z.string(), value: z.number().nullable(), validation_value: z.number().nullable() });
export const job = z.object({
  id: z.string(),
  tenant_id: z.string(),
  model_name: z.string(),
  kind: z.string(),
  state: z.enum(JOB_STATES),
  spec: z.object({ kind: z.string(), dataset: z.record(z.string(), z.unknown()), epochs: z.number(), epochs_per_task: z.number(), learning_rate: z.number(), l2: z.number(), validation_share: z.number() }),
  epochs_done: z.number(),
  progress: z.number(),
  metrics: z.array(epochOut),
  result: z.record(z.string(), z.unknown()).nullable(),
  model_id: z.string().nullable(),
  ...jobViewFields,
});

export const costBody = z.object({
  provider: z.string().min(1).max(64),
  model: z.string().min(1).max(128).optional(),
  amount,
  currency: currency.default('USD'),
  input_tokens: z.number().int().min(0).optional(),
  output_tokens: z.number().int().min(0).optional(),
  description: z.string().max(500).optional(),
  occurred_at: iso.optional(),
});
export const cost = z.object({
  id: z.string(),
  tenant_id: z.string(),
  provider: z.string(),
  model: z.string().nullable(),
  amount: z.string(),
  currency: z.string(),
  input_tokens: z.number().nullable(),
  output_tokens: z.number().nullable(),
  description: z.string().nullable(),
  occurred_at: z.string(),
  created_by: z.string(),
  created_at: z.string(),
});
export const budgetBody = z.object({
  name: z.string().min(1).max(200),
  period: z.enum(['day', 'month']).default('month'),
  amount,
  currency: currency.default('USD'),
  model: z.string().min(1).max(128).optional(),
  provider: z.string().min(1).max(64).optional(),
  thresholds: z.array(z.number().gt(0).max(10)).min(1).max(10).default([0.5, 0.8, 1]),
});
export const budget = z.object({
  id: z.string(),
  tenant_id: z.string(),
  name: z.string(),
  period: z.enum(['day', 'month']),
  amount: z.string(),
  currency: z.string(),
  model: z.string().nullable(),
  provider: z.string().nullable(),
  thresholds: z.array(z.number()),
  created_by: z.string(),
  created_at: z.string(),
});
export const alert = z.object({
  id: z.string(),
  tenant_id: z.string(),
  budget_id: z.string(),
  kind: z.enum(['actual', 'forecast']),
  threshold: z.number(),
  period_start: z.string(),
  spend: z.string(),
  forecast: z.string(),
  budget: z.string(),
  currency: z.string(),
  created_at: z.string(),
});
