// Significance tests of the analytics kernel (A/B comparisons of two arms).
import { normCdf } from '../numeric';
import { meanVar as sample } from './welch';

function logFactorials(n: number): Float64Array {
  const f = new Float64Array(n + 1);
  for (let i = 2; i <= n; i++) f[i] = f[i - 1]! + Math.log(i);
  return f;
}

/**
 * Fisher's exact test on a 2x2 table (successes and failures of arms A and B): the one-sided
 * p-values that B's success rate is lower than A's (`less`) and higher (`greater`).
 */
export function fisherExact(aOk: number, aN: number, bOk: number, bN: number): { less: number; greater: number } {
  const n = aN + bN;
  const ok = aOk + bOk;
  const lf = logFactorials(n);
  const choose = (m: number, k: number) => lf[m]! - lf[k]! - lf[m - k]!;
  const total = choose(n, bN);
  const lo = Math.max(0, bN - (n - ok));
  const hi = Math.min(bN, ok);
  // Probability that B has exactly x successes, with the margins fixed (hypergeometric).
  const p = (x: number) => Math.exp(choose(ok, x) + choose(n - ok, bN - x) - total);
  let less = 0;
  let greater = 0;
  for (let x = lo; x <= hi; x++) {
    const px = p(x);
    if (x <= bOk) less += px;
    if (x >= bOk) greater += px;
  }
  return { less: Math.min(1, less), greater: Math.min(1, greater) };
}

/** Two-proportion z statistic (pooled); null when it is undefined (all succeed or all fail). */
export function twoProportionZ(aOk: number, aN: number, bOk: number, bN: number): number | null {
  const pooled = (aOk + bOk) / (aN + bN);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / aN + 1 / bN));
  if (!se) return null;
  return (bOk / bN - aOk / aN) / se;
}

// The sample mean and variance of welch.ts (one place for both Welch computations).
function meanVar(x: number[]) {
  const { mean, variance } = sample(x);
  return { m: mean, v: x.length > 1 ? variance : 0 };
}

/**
 * Welch's t-test of B's mean against A's; the p-value that B is higher uses the normal
 * approximation of t (documented: fine from ~20 samples an arm, conservative below).
 */
export function welch(a: number[], b: number[]): { mean_a: number | null; mean_b: number | null; t: number | null; p_greater: number | null } {
  if (!a.length || !b.length) return { mean_a: a.length ? meanVar(a).m : null, mean_b: b.length ? meanVar(b).m : null, t: null, p_greater: null };
  const A = meanVar(a);
  const B = meanVar(b);
  const se = Math.sqrt(A.v / a.length + B.v / b.length);
  if (!se || a.length < 2 || b.length < 2) return { mean_a: A.m, mean_b: B.m, t: null, p_greater: null };
  const t = (B.m - A.m) / se;
  return { mean_a: A.m, mean_b: B.m, t, p_greater: 1 - normCdf(t) };
}

/** Contiguous action sequences of length 2..maxLen repeated at least minCount times. */
export function frequentSequences(streams: string[][], maxLen: number, minCount: number) {
  const counts = new Map<string, number>();
  for (const s of streams) {
    for (let len = 2; len <= maxLen; len++) {
      for (let i = 0; i + len <= s.length; i++) {
        const key = s.slice(i, i + len).join('\u0000');
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
  }
  return [...counts.entries()]
    .filter(([, n]) => n >= minCount)
    .map(([k, n]) => ({ sequence: k.split('\u0000'), count: n }))
    .sort((a, b) => b.count * b.sequence.length - a.count * a.sequence.length || a.sequence.join().localeCompare(b.sequence.join()));
}
