import { serve } from '../runtime';
import { TaskInputError } from '../sdk';
import { blackScholes, cholesky, matchOrders, normals, prng } from './lib';
import manifest from './manifest';

export = serve(manifest, {
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
