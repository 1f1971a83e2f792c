import { serve } from '../runtime';
import { TaskInputError } from '../sdk';
import { blackScholes, cholesky, matchOrders, normals, prng } from './lib';
import manifest from './manifest';
import { backtest } from './backtest';

export = serve(manifest, {
  backtest: ({ prices, strategies, cost_bps, periods_per_year }) => {
    strategies.forEach((s, i) => {
      if (s.name === 'sma_crossover' && s.fast >= s.slow) throw new TaskInputError('fast must be shorter than slow', ['strategies', i, 'fast']);
    });
    const results = strategies.map((s) => backtest(s, prices, cost_bps, periods_per_year));
    // Sharpe first; a strategy that never held (no volatility) has none and goes last.
    results.sort((a, b) => (b.sharpe ?? -Infinity) - (a.sharpe ?? -Infinity) || b.total_return - a.total_return);
    return {
      method: 'long/flat backtest on close-to-close returns, position decided at close t and held over t+1, cost_bps per position change; ranked by annualised Sharpe ratio (risk-free rate 0)',
      ranking: results.map((r, i) => ({ rank: i + 1, ...r })),
    };
  },
  price_option: (o) => blackScholes(o),
  match_orders: ({ orders }) => {
    const ids = new Set<string>();
    for (const [i, o] of orders.entries()) {
      if (ids.has(o.id)) throw new TaskInputError(`order id "${o.id}" appears twice`, ['orders', i, 'id']);
      ids.add(o.id);
    }
    return matchOrders(orders);
  },
  portfolio_risk: ({ positions, correlation, horizon_days, confidence, paths, seed }) => {
    const n = positions.length;
    let l: number[][] | null = null;
    if (correlation) {
      if (correlation.length !== n || correlation.some((row) => row.length !== n)) {
        throw new TaskInputError(`correlation must be a ${n}x${n} matrix`, ['correlation']);
      }
      l = cholesky(correlation);
      if (!l) throw new TaskInputError('correlation matrix is not positive definite', ['correlation']);
    }
    const dt = horizon_days / 252;
    const z = normals(prng(seed));
    const pnl = new Float64Array(paths);
    const eps = new Float64Array(n);
    const value = positions.reduce((a, p) => a + p.value, 0);
    for (let k = 0; k < paths; k++) {
      for (let i = 0; i < n; i++) eps[i] = z();
      let total = 0;
      for (let i = 0; i < n; i++) {
        let e = eps[i];
        if (l) {
          e = 0;
          for (let j = 0; j <= i; j++) e += l[i][j] * eps[j];
        }
        const p = positions[i];
        // Geometric Brownian motion over the horizon.
        const r = Math.exp((p.mu - (p.sigma * p.sigma) / 2) * dt + p.sigma * Math.sqrt(dt) * e) - 1;
        total += p.value * r;
      }
      pnl[k] = total;
    }
    pnl.sort();
    const cut = Math.max(1, Math.floor((1 - confidence) * paths));
    let tail = 0;
    for (let k = 0; k < cut; k++) tail += pnl[k];
    let mean = 0;
    for (const x of pnl) mean += x;
    mean /= paths;
    let sq = 0;
    for (const x of pnl) sq += (x - mean) ** 2;
    return { value, var: -pnl[cut - 1], cvar: -tail / cut, expected_pnl: mean, pnl_stddev: Math.sqrt(sq / (paths - 1)), paths, confidence };
  },
});
