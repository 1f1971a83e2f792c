import { z } from 'zod';
import { defineKernel, task } from '../sdk';

const values = z.array(z.number().finite()).min(1).max(200_000);
const sample = z.array(z.number().finite().nonnegative()).min(1).max(100_000);
const seed = z.number().int().min(0).max(2 ** 31 - 1);
const spread = z.object({ mean: z.number(), p50: z.number(), p90: z.number(), p95: z.number(), p99: z.number(), max: z.number() });
const arm = z.object({
  successes: z.number().int().min(0),
  trials: z.number().int().min(1).max(1_000_000),
  latency_ms: z.array(z.number().finite().nonnegative()).max(100_000).default([]),
  cost: z.array(z.number().finite().nonnegative()).max(100_000).default([]),
});
const meanTest = z.object({ mean_a: z.number().nullable(), mean_b: z.number().nullable(), t: z.number().nullable(), p_greater: z.number().nullable() });

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
    simulate_queue: task({
      summary: 'Discrete-event Monte Carlo of a c-server FIFO queue, arrivals and service bootstrapped from measured samples (seeded)',
      input: z.object({
        interarrival_ms: sample,
        service_ms: sample,
        servers: z.number().int().min(1).max(1024),
        load_factor: z.number().positive().max(100).default(1),
        tasks: z.number().int().min(1).max(100_000).default(2000),
        replications: z.number().int().min(1).max(200).default(20),
        latency_target_ms: z.number().positive(),
        seed,
      }),
      output: z.object({
        method: z.string(),
        seed: z.number().int(),
        replications: z.number().int(),
        tasks: z.number().int(),
        sojourn_ms: spread,
        wait_ms: spread,
        utilisation: z.object({ mean: z.number(), p50: z.number(), p95: z.number() }),
        slo_breach_share: z.number(),
        replication_means_ms: z.array(z.number()),
      }),
    }),
    simulate_totals: task({
      summary: 'Bootstrap Monte Carlo of a total over N periods from a measured per-period sample, scaled by a factor (seeded)',
      input: z.object({ sample, periods: z.number().int().min(1).max(3650), factor: z.number().nonnegative().max(1e6).default(1), replications: z.number().int().min(1).max(20_000).default(2000), seed }),
      output: z.object({ method: z.string(), seed: z.number().int(), replications: z.number().int(), total: z.object({ mean: z.number(), p5: z.number(), p50: z.number(), p95: z.number() }) }),
    }),
    ab_test: task({
      summary: "Two arms compared: Fisher's exact test and a two-proportion z on success, Welch's t on latency and cost",
      input: z.object({ a: arm, b: arm }),
      output: z.object({
        success_rate_a: z.number(),
        success_rate_b: z.number(),
        fisher_p_b_lower: z.number(),
        fisher_p_b_higher: z.number(),
        z: z.number().nullable(),
        latency: meanTest,
        cost: meanTest,
      }),
    }),
    frequent_sequences: task({
      summary: 'Contiguous sequences (n-grams) of 2..max_length items repeated at least min_count times across streams',
      input: z.object({ streams: z.array(z.array(z.string().max(128)).max(10_000)).max(10_000), max_length: z.number().int().min(2).max(5).default(3), min_count: z.number().int().min(2).max(1_000_000).default(3) }),
      output: z.object({ sequences: z.array(z.object({ sequence: z.array(z.string()), count: z.number().int() })) }),
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
