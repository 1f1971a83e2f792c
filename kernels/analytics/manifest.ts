import { z } from 'zod';
import { defineKernel, task } from '../sdk';

const values = z.array(z.number().finite()).min(1).max(200_000);

export default defineKernel({
  domain: 'analytics',
  description: 'Aggregates, percentiles, regression and forecasting over numeric series',
  nodes: 2,
  threadsPerNode: 1,
  slo: { latency_p95_ms: 250, error_rate: 0.01 },
  tasks: {
    describe: task({
      summary: 'Count, sum, mean, min, max, variance, standard deviation and median of a series',
      input: z.object({ values }),
      output: z.object({ count: z.number().int(), sum: z.number(), mean: z.number(), min: z.number(), max: z.number(), variance: z.number(), stddev: z.number(), median: z.number() }),
    }),
    percentiles: task({
      summary: 'Percentiles of a series (linear interpolation between closest ranks)',
      input: z.object({ values, percentiles: z.array(z.number().min(0).max(100)).min(1).max(100).default([50, 90, 95, 99]) }),
      output: z.object({ count: z.number().int(), percentiles: z.array(z.object({ p: z.number(), value: z.number() })) }),
    }),
    aggregate: task({
      summary: 'Group rows by key: count, sum, mean, min and max of each group',
      input: z.object({ rows: z.array(z.object({ key: z.string().max(256), value: z.number().finite() })).min(1).max(200_000) }),
      output: z.object({ groups: z.array(z.object({ key: z.string(), count: z.number().int(), sum: z.number(), mean: z.number(), min: z.number(), max: z.number() })) }),
    }),
    regression: task({
      summary: 'Ordinary least-squares line y = slope * x + intercept, with r²',
      input: z.object({ x: z.array(z.number().finite()).min(2).max(200_000), y: z.array(z.number().finite()).min(2).max(200_000) }),
      output: z.object({ n: z.number().int(), slope: z.number(), intercept: z.number(), r2: z.number() }),
    }),
    forecast: task({
      summary: 'Additive Holt-Winters forecast (level, trend, season); without a season, Holt linear trend',
      input: z.object({
        series: z.array(z.number().finite()).min(3).max(100_000),
        horizon: z.number().int().min(1).max(1000),
        season_length: z.number().int().min(2).max(1000).optional(),
        alpha: z.number().gt(0).lt(1).default(0.5),
        beta: z.number().gt(0).lt(1).default(0.1),
        gamma: z.number().gt(0).lt(1).default(0.1),
      }),
      output: z.object({ forecast: z.array(z.number()), level: z.number(), trend: z.number(), sse: z.number(), method: z.enum(['holt', 'holt_winters']) }),
    }),
    ab_difference: task({
      summary: 'Difference of means of two samples (b - a) with a Welch t confidence interval and two-sided p-value',
      input: z.object({ a: z.array(z.number().finite()).min(2).max(100_000), b: z.array(z.number().finite()).min(2).max(100_000), confidence: z.number().gt(0.5).lt(1).default(0.95) }),
      output: z.object({
        a: z.object({ n: z.number().int(), mean: z.number(), stddev: z.number() }),
        b: z.object({ n: z.number().int(), mean: z.number(), stddev: z.number() }),
        difference: z.number(), standard_error: z.number(), df: z.number(), confidence: z.number(), ci_low: z.number(), ci_high: z.number(), p_value: z.number(), method: z.literal('welch_t_interval'),
      }),
    }),
  },
});
