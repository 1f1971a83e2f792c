// Difference of two means with a Welch t confidence interval (unequal variances,
// Welch-Satterthwaite degrees of freedom). The t quantile is found by bisection on the
// Student t CDF, computed through the regularized incomplete beta function (Lentz's
// continued fraction, as in Numerical Recipes' betacf).

function logGamma(x: number): number {
  // Lanczos approximation (g = 7, n = 9).
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  x -= 1;
  let a = c[0]!;
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += c[i]! / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

function betacf(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-12) break;
  }
  return h;
}

/** Regularized incomplete beta I_x(a, b). */
function incBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2) ? (front * betacf(a, b, x)) / a : 1 - (front * betacf(b, a, 1 - x)) / b;
}

/** P(T <= t) for Student's t with df degrees of freedom. */
export function tCdf(t: number, df: number): number {
  const x = df / (df + t * t);
  const tail = 0.5 * incBeta(x, df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** The t value with P(T <= t) = p (bisection; p in (0.5, 1)). */
export function tQuantile(p: number, df: number): number {
  let lo = 0;
  let hi = 1;
  while (tCdf(hi, df) < p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-10; i++) {
    const mid = (lo + hi) / 2;
    if (tCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** Count, mean and sample variance (n - 1 in the denominator). */
export function meanVar(xs: number[]): { n: number; mean: number; variance: number } {
  const n = xs.length;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1);
  return { n, mean, variance };
}

/** Mean of b minus mean of a, its Welch confidence interval, and the two-sided p-value. */
export function welch(a: number[], b: number[], confidence: number) {
  const A = meanVar(a);
  const B = meanVar(b);
  const va = A.variance / A.n;
  const vb = B.variance / B.n;
  const se = Math.sqrt(va + vb);
  const diff = B.mean - A.mean;
  const base = { a: { n: A.n, mean: A.mean, stddev: Math.sqrt(A.variance) }, b: { n: B.n, mean: B.mean, stddev: Math.sqrt(B.variance) }, difference: diff, confidence, method: 'welch_t_interval' as const };
  if (se === 0) return { ...base, df: A.n + B.n - 2, standard_error: 0, ci_low: diff, ci_high: diff, p_value: diff === 0 ? 1 : 0 };
  const df = (va + vb) ** 2 / (va ** 2 / (A.n - 1) + vb ** 2 / (B.n - 1));
  const t = tQuantile(1 - (1 - confidence) / 2, df);
  const p = 2 * (1 - tCdf(Math.abs(diff / se), df));
  return { ...base, df, standard_error: se, ci_low: diff - t * se, ci_high: diff + t * se, p_value: Math.min(1, Math.max(0, p)) };
}
