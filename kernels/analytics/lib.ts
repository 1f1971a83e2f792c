// Pure numeric routines of the analytics kernel.

export function sorted(values: number[]): number[] {
  return Float64Array.from(values).sort() as unknown as number[];
}

/** Percentile by linear interpolation between closest ranks (the "R-7" definition). */
export function percentile(sortedValues: ArrayLike<number>, p: number): number {
  const n = sortedValues.length;
  if (n === 1) return sortedValues[0];
  const h = (n - 1) * (p / 100);
  const lo = Math.floor(h);
  const hi = Math.min(n - 1, lo + 1);
  return sortedValues[lo] + (h - lo) * (sortedValues[hi] - sortedValues[lo]);
}

export function describe(values: number[]) {
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const mean = sum / values.length;
  let sq = 0;
  for (const v of values) sq += (v - mean) ** 2;
  // Sample variance (n - 1); a single value has none.
  const variance = values.length > 1 ? sq / (values.length - 1) : 0;
  return { count: values.length, sum, mean, min, max, variance, stddev: Math.sqrt(variance), median: percentile(sorted(values), 50) };
}

export function regression(x: number[], y: number[]) {
  const n = x.length;
  let sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;
  for (let i = 0; i < n; i++) {
    sx += x[i]; sy += y[i]; sxx += x[i] * x[i]; sxy += x[i] * y[i]; syy += y[i] * y[i];
  }
  const denom = n * sxx - sx * sx;
  if (denom === 0) return null;
  const slope = (n * sxy - sx * sy) / denom;
  const intercept = (sy - slope * sx) / n;
  const ssTot = syy - (sy * sy) / n;
  let ssRes = 0;
  for (let i = 0; i < n; i++) ssRes += (y[i] - (slope * x[i] + intercept)) ** 2;
  return { n, slope, intercept, r2: ssTot === 0 ? 1 : 1 - ssRes / ssTot };
}

/** Additive Holt-Winters; with no season, Holt's linear trend. One-step errors give the SSE. */
export function holtWinters(series: number[], horizon: number, alpha: number, beta: number, gamma: number, m?: number) {
  if (!m) {
    let level = series[0];
    let trend = series[1] - series[0];
    let sse = 0;
    for (let t = 1; t < series.length; t++) {
      const predicted = level + trend;
      sse += (series[t] - predicted) ** 2;
      const prevLevel = level;
      level = alpha * series[t] + (1 - alpha) * (level + trend);
      trend = beta * (level - prevLevel) + (1 - beta) * trend;
    }
    const forecast = Array.from({ length: horizon }, (_, h) => level + (h + 1) * trend);
    return { forecast, level, trend, sse, method: 'holt' as const };
  }
  // Initial level: mean of the first season; trend: mean slope between the first two seasons.
  const first = series.slice(0, m);
  const second = series.slice(m, 2 * m);
  let level = first.reduce((a, b) => a + b, 0) / m;
  let trend = 0;
  for (let i = 0; i < m; i++) trend += (second[i] - first[i]) / m;
  trend /= m;
  const season = first.map((v) => v - level);
  let sse = 0;
  for (let t = m; t < series.length; t++) {
    const s = season[t % m];
    const predicted = level + trend + s;
    sse += (series[t] - predicted) ** 2;
    const prevLevel = level;
    level = alpha * (series[t] - s) + (1 - alpha) * (level + trend);
    trend = beta * (level - prevLevel) + (1 - beta) * trend;
    season[t % m] = gamma * (series[t] - level) + (1 - gamma) * s;
  }
  const n = series.length;
  const forecast = Array.from({ length: horizon }, (_, h) => level + (h + 1) * trend + season[(n + h) % m]);
  return { forecast, level, trend, sse, method: 'holt_winters' as const };
}
