// Pure numeric routines of the trading kernel.
import { normCdf } from '../numeric';

export { normCdf };

export function normPdf(x: number): number {
  return Math.exp(-(x * x) / 2) / Math.sqrt(2 * Math.PI);
}

export function blackScholes(o: { type: 'call' | 'put'; spot: number; strike: number; rate: number; volatility: number; time_years: number; dividend_yield: number }) {
  const { spot: S, strike: K, rate: r, volatility: v, time_years: T, dividend_yield: q } = o;
  const sqrtT = Math.sqrt(T);
  const d1 = (Math.log(S / K) + (r - q + (v * v) / 2) * T) / (v * sqrtT);
  const d2 = d1 - v * sqrtT;
  const dq = Math.exp(-q * T);
  const dr = Math.exp(-r * T);
  const gamma = (dq * normPdf(d1)) / (S * v * sqrtT);
  const vega = (S * dq * normPdf(d1) * sqrtT) / 100;
  if (o.type === 'call') {
    const price = S * dq * normCdf(d1) - K * dr * normCdf(d2);
    const theta = (-(S * dq * normPdf(d1) * v) / (2 * sqrtT) - r * K * dr * normCdf(d2) + q * S * dq * normCdf(d1)) / 365;
    return { price, delta: dq * normCdf(d1), gamma, vega, theta, rho: (K * T * dr * normCdf(d2)) / 100 };
  }
  const price = K * dr * normCdf(-d2) - S * dq * normCdf(-d1);
  const theta = (-(S * dq * normPdf(d1) * v) / (2 * sqrtT) + r * K * dr * normCdf(-d2) - q * S * dq * normCdf(-d1)) / 365;
  return { price, delta: dq * (normCdf(d1) - 1), gamma, vega, theta, rho: (-K * T * dr * normCdf(-d2)) / 100 };
}

export { prng } from '../numeric';

/** Standard normals by Box-Muller from a uniform source. */
export function normals(rand: () => number): () => number {
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    let u = 0;
    while (u === 0) u = rand();
    const v = rand();
    const m = Math.sqrt(-2 * Math.log(u));
    spare = m * Math.sin(2 * Math.PI * v);
    return m * Math.cos(2 * Math.PI * v);
  };
}

/** Lower-triangular L with L·Lᵀ = m, or null when m is not positive definite. */
export function cholesky(m: number[][]): number[][] | null {
  const n = m.length;
  const l = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let sum = m[i][j];
      for (let k = 0; k < j; k++) sum -= l[i][k] * l[j][k];
      if (i === j) {
        if (sum <= 1e-12) return null;
        l[i][i] = Math.sqrt(sum);
      } else {
        l[i][j] = sum / l[j][j];
      }
    }
  }
  return l;
}

export interface Order {
  id: string;
  side: 'buy' | 'sell';
  price: number;
  quantity: number;
}

/** Matches orders in arrival order against the resting book; trades at the resting order's price. */
export function matchOrders(orders: Order[]) {
  const bids: Order[] = []; // best (highest) first, then oldest
  const asks: Order[] = []; // best (lowest) first, then oldest
  const trades: Array<{ buy_id: string; sell_id: string; price: number; quantity: number }> = [];
  for (const incoming of orders) {
    const o = { ...incoming };
    const book = o.side === 'buy' ? asks : bids;
    while (o.quantity > 0 && book.length > 0) {
      const best = book[0];
      const crosses = o.side === 'buy' ? o.price >= best.price : o.price <= best.price;
      if (!crosses) break;
      const q = Math.min(o.quantity, best.quantity);
      trades.push({ buy_id: o.side === 'buy' ? o.id : best.id, sell_id: o.side === 'sell' ? o.id : best.id, price: best.price, quantity: q });
      o.quantity -= q;
      best.quantity -= q;
      if (best.quantity <= 0) book.shift();
    }
    if (o.quantity > 0) {
      const rest = o.side === 'buy' ? bids : asks;
      const better = o.side === 'buy' ? (x: Order) => x.price < o.price : (x: Order) => x.price > o.price;
      const at = rest.findIndex(better);
      rest.splice(at === -1 ? rest.length : at, 0, o);
    }
  }
  return { trades, bids, asks };
}
