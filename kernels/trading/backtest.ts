// Backtests of simple trading strategies over a price series, each scored by risk-adjusted
// return. Positions are long (1) or flat (0), decided on a bar's close and held over the next
// bar, so that no strategy sees a price before it trades on it.

export type Strategy =
  | { name: 'buy_and_hold' }
  | { name: 'sma_crossover'; fast: number; slow: number }
  | { name: 'momentum'; lookback: number }
  | { name: 'mean_reversion'; lookback: number; z_entry: number };

function sma(prices: number[], end: number, n: number): number {
  let s = 0;
  for (let i = end - n + 1; i <= end; i++) s += prices[i]!;
  return s / n;
}

/** The position (0 or 1) a strategy holds after the close of bar t. */
function position(s: Strategy, prices: number[], t: number, held: number): number {
  switch (s.name) {
    case 'buy_and_hold':
      return 1;
    case 'sma_crossover':
      if (t + 1 < s.slow) return 0;
      return sma(prices, t, s.fast) > sma(prices, t, s.slow) ? 1 : 0;
    case 'momentum':
      if (t < s.lookback) return 0;
      return prices[t]! > prices[t - s.lookback]! ? 1 : 0;
    case 'mean_reversion': {
      if (t + 1 < s.lookback) return 0;
      const m = sma(prices, t, s.lookback);
      let v = 0;
      for (let i = t - s.lookback + 1; i <= t; i++) v += (prices[i]! - m) ** 2;
      const sd = Math.sqrt(v / s.lookback);
      if (!sd) return held;
      const z = (prices[t]! - m) / sd;
      if (z <= -s.z_entry) return 1;
      if (z >= 0) return 0;
      return held;
    }
  }
}

export function backtest(s: Strategy, prices: number[], costBps: number, periodsPerYear: number) {
  const returns: number[] = [];
  let held = 0;
  let trades = 0;
  let equity = 1;
  let peak = 1;
  let maxDrawdown = 0;
  for (let t = 0; t + 1 < prices.length; t++) {
    const next = position(s, prices, t, held);
    const cost = next !== held ? costBps / 10_000 : 0;
    if (next !== held) trades++;
    held = next;
    const r = held * (prices[t + 1]! / prices[t]! - 1) - cost;
    returns.push(r);
    equity *= 1 + r;
    peak = Math.max(peak, equity);
    maxDrawdown = Math.max(maxDrawdown, 1 - equity / peak);
  }
  const n = returns.length;
  const mean = returns.reduce((a, b) => a + b, 0) / n;
  const sd = n > 1 ? Math.sqrt(returns.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : 0;
  const down = returns.filter((r) => r < 0);
  const dd = down.length ? Math.sqrt(down.reduce((a, b) => a + b * b, 0) / n) : 0;
  return {
    strategy: s.name,
    params: { ...s } as Record<string, unknown>,
    total_return: equity - 1,
    annualized_return: (equity > 0 ? equity ** (periodsPerYear / n) : 0) - 1,
    annualized_volatility: sd * Math.sqrt(periodsPerYear),
    sharpe: sd ? (mean / sd) * Math.sqrt(periodsPerYear) : null,
    sortino: dd ? (mean / dd) * Math.sqrt(periodsPerYear) : null,
    max_drawdown: maxDrawdown,
    trades,
    periods: n,
  };
}
