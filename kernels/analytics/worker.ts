import { serve } from '../runtime';
import { TaskInputError } from '../sdk';
import { describe, holtWinters, percentile, regression, sorted } from './lib';
import manifest from './manifest';
import { bootstrapTotals, simulateQueue } from './sim';
import { fisherExact, frequentSequences, twoProportionZ, welch } from './stats';

function spread(values: number[]) {
  const s = sorted(values);
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return { mean, p50: percentile(s, 50), p90: percentile(s, 90), p95: percentile(s, 95), p99: percentile(s, 99), max: s[s.length - 1]! };
}
import { welch as welchInterval } from './welch';

export = serve(manifest, {
  describe: ({ values }) => describe(values),
  percentiles: ({ values, percentiles }) => {
    const s = sorted(values);
    return { count: values.length, percentiles: percentiles.map((p) => ({ p, value: percentile(s, p) })) };
  },
  aggregate: ({ rows }) => {
    const groups = new Map<string, { key: string; count: number; sum: number; min: number; max: number }>();
    for (const { key, value } of rows) {
      const g = groups.get(key) ?? { key, count: 0, sum: 0, min: Infinity, max: -Infinity };
      g.count++;
      g.sum += value;
      g.min = Math.min(g.min, value);
      g.max = Math.max(g.max, value);
      groups.set(key, g);
    }
    return { groups: [...groups.values()].sort((a, b) => a.key.localeCompare(b.key)).map((g) => ({ ...g, mean: g.sum / g.count })) };
  },
  regression: ({ x, y }) => {
    if (x.length !== y.length) throw new TaskInputError(`x has ${x.length} values but y has ${y.length}`, ['y']);
    const r = regression(x, y);
    if (!r) throw new TaskInputError('all x values are equal: the slope is undefined', ['x']);
    return r;
  },
  forecast: ({ series, horizon, season_length, alpha, beta, gamma }) => {
    if (season_length && series.length < 2 * season_length) {
      throw new TaskInputError(`a seasonal forecast needs at least two seasons (${2 * season_length} points), got ${series.length}`, ['series']);
    }
    return holtWinters(series, horizon, alpha, beta, gamma, season_length);
  },
  simulate_queue: (q) => {
    if (q.tasks * q.replications > 2_000_000) throw new TaskInputError('tasks x replications must stay within 2,000,000', ['replications']);
    const r = simulateQueue(q);
    const util = sorted(r.utilisation);
    return {
      method: 'discrete-event simulation of a c-server FIFO queue; inter-arrival and service times bootstrapped from the measured samples; arrivals scaled by load_factor',
      seed: q.seed,
      replications: q.replications,
      tasks: q.tasks,
      sojourn_ms: spread(r.sojourn),
      wait_ms: spread(r.waits),
      utilisation: { mean: r.utilisation.reduce((a, b) => a + b, 0) / r.utilisation.length, p50: percentile(util, 50), p95: percentile(util, 95) },
      slo_breach_share: r.sojourn.filter((x) => x > q.latency_target_ms).length / r.sojourn.length,
      replication_means_ms: r.means,
    };
  },
  simulate_totals: ({ sample, periods, factor, replications, seed }) => {
    const s = sorted(bootstrapTotals(sample, periods, factor, replications, seed));
    const mean = s.reduce((a, b) => a + b, 0) / s.length;
    return {
      method: 'bootstrap Monte Carlo: each period drawn from the measured per-period sample, scaled by factor, summed over periods',
      seed,
      replications,
      total: { mean, p5: percentile(s, 5), p50: percentile(s, 50), p95: percentile(s, 95) },
    };
  },
  ab_test: ({ a, b }) => {
    if (a.successes > a.trials) throw new TaskInputError('successes exceed trials', ['a', 'successes']);
    if (b.successes > b.trials) throw new TaskInputError('successes exceed trials', ['b', 'successes']);
    const f = fisherExact(a.successes, a.trials, b.successes, b.trials);
    return {
      success_rate_a: a.successes / a.trials,
      success_rate_b: b.successes / b.trials,
      fisher_p_b_lower: f.less,
      fisher_p_b_higher: f.greater,
      z: twoProportionZ(a.successes, a.trials, b.successes, b.trials),
      latency: welch(a.latency_ms, b.latency_ms),
      cost: welch(a.cost, b.cost),
    };
  },
  frequent_sequences: ({ streams, max_length, min_count }) => ({ sequences: frequentSequences(streams, max_length, min_count).slice(0, 1000) }),
  ab_difference: ({ a, b, confidence }) => welchInterval(a, b, confidence),
});
