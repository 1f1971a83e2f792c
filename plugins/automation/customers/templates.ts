// Onboarding templates are data: the kernels a kind of customer uses with their quotas, the
// starter workflows made for it, and the first task that proves the tenant works end to end.
// The inputs are real task inputs of the built-in kernels (kernels/*/manifest.ts).

export interface StarterWorkflow {
  name: string;
  steps: Array<{ id: string; kernel: string; task: string; input: unknown }>;
}

export interface Template {
  customer_type: string;
  description: string;
  plan: string;
  kernel_quotas: Record<string, { max_concurrent: number; tasks_per_minute: number }>;
  starter_workflows: StarterWorkflow[];
  first_task: { kernel: string; task: string; input: unknown };
  /** The steps a flow of this template runs, in order. */
  steps: string[];
}

export const STEP_ORDER = ['tenant', 'admin_user', 'api_key', 'kernel_quotas', 'starter_workflows', 'first_task'] as const;
export type StepName = (typeof STEP_ORDER)[number];

const series = [12, 15, 14, 18, 21, 19, 24, 27, 26, 30];

export const TEMPLATES: Record<string, Template> = {
  trading_desk: {
    customer_type: 'trading_desk',
    description: 'Option pricing and portfolio risk on the trading kernel',
    plan: 'enterprise',
    kernel_quotas: { trading: { max_concurrent: 8, tasks_per_minute: 1200 }, analytics: { max_concurrent: 2, tasks_per_minute: 120 } },
    starter_workflows: [
      {
        name: 'Price a call and a put',
        steps: [
          { id: 'call', kernel: 'trading', task: 'price_option', input: { type: 'call', spot: 100, strike: 105, rate: 0.03, volatility: 0.2, time_years: 0.5 } },
          { id: 'put', kernel: 'trading', task: 'price_option', input: { type: 'put', spot: 100, strike: 95, rate: 0.03, volatility: 0.2, time_years: 0.5 } },
        ],
      },
    ],
    first_task: { kernel: 'trading', task: 'price_option', input: { type: 'call', spot: 100, strike: 100, rate: 0.02, volatility: 0.25, time_years: 1 } },
    steps: [...STEP_ORDER],
  },
  llm_platform: {
    customer_type: 'llm_platform',
    description: 'Prompt rendering, token counting and cost estimates on the llm kernel',
    plan: 'pro',
    kernel_quotas: { llm: { max_concurrent: 4, tasks_per_minute: 600 } },
    starter_workflows: [
      { name: 'Count the tokens of a prompt', steps: [{ id: 'count', kernel: 'llm', task: 'count_tokens', input: { text: 'Summarise the incident report in three sentences.' } }] },
    ],
    first_task: { kernel: 'llm', task: 'count_tokens', input: { text: 'Hello from a new tenant.' } },
    steps: [...STEP_ORDER],
  },
  analytics_team: {
    customer_type: 'analytics_team',
    description: 'Descriptive statistics and forecasts on the analytics kernel',
    plan: 'pro',
    kernel_quotas: { analytics: { max_concurrent: 4, tasks_per_minute: 600 } },
    starter_workflows: [{ name: 'Describe a series', steps: [{ id: 'describe', kernel: 'analytics', task: 'describe', input: { values: series } }] }],
    first_task: { kernel: 'analytics', task: 'describe', input: { values: series } },
    steps: [...STEP_ORDER],
  },
};
