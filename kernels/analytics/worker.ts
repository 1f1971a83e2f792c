import { serve } from '../runtime';
import { TaskInputError } from '../sdk';
import { describe, holtWinters, percentile, regression, sorted } from './lib';
import manifest from './manifest';
import { welch } from './welch';

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
  ab_difference: ({ a, b, confidence }) => welch(a, b, confidence),
});
