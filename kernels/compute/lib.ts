// Pure numeric routines of the compute kernel.

/** C = A·B for n×n row-major matrices (i-k-j order, so the inner loop walks memory in order). */
export function matmul(a: Float64Array, b: Float64Array, n: number): Float64Array {
  const c = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    const row = i * n;
    for (let k = 0; k < n; k++) {
      const aik = a[row + k]!;
      const bk = k * n;
      for (let j = 0; j < n; j++) c[row + j]! += aik * b[bk + j]!;
    }
  }
  return c;
}

/** A deterministic fill (no randomness needed: the figures are timings, not values). */
export function filled(n: number, seed: number): Float64Array {
  const m = new Float64Array(n);
  for (let i = 0; i < n; i++) m[i] = ((i * 7919 + seed) % 1000) / 1000;
  return m;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

export function benchmark(n: number, repeats: number, memoryMb: number) {
  const a = filled(n * n, 1);
  const b = filled(n * n, 2);
  const times: number[] = [];
  let checksum = 0;
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    const c = matmul(a, b, n);
    times.push(performance.now() - t0);
    checksum = c[0]! + c[c.length - 1]!;
  }
  const best = Math.min(...times);
  const len = Math.floor((memoryMb * 1024 * 1024) / 8);
  const src = filled(len, 3);
  const dst = new Float64Array(len);
  const copies: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    dst.set(src);
    copies.push(performance.now() - t0);
  }
  const bestCopy = Math.max(Math.min(...copies), 1e-3);
  return {
    matmul: { n, repeats, best_ms: round(best), median_ms: round(median(times)), gflops: round((2 * n ** 3) / (best / 1000) / 1e9, 4), checksum: round(checksum, 6) },
    // A copy reads and writes every byte once.
    memory: { bytes: len * 8, repeats, best_ms: round(bestCopy), copy_gbps: round((2 * len * 8) / (bestCopy / 1000) / 1e9, 4) },
  };
}

export interface TrainInput {
  kind: 'linear' | 'logistic';
  x: number[][];
  y: number[];
  epochs: number;
  learning_rate: number;
  l2: number;
  validation_share: number;
  start_epoch: number;
  weights?: number[];
  bias?: number;
}

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

/** Mean and standard deviation of each column (a constant column gets std 1). */
export function scalingOf(x: number[][]) {
  const d = x[0]!.length;
  const mean = new Array<number>(d).fill(0);
  const std = new Array<number>(d).fill(0);
  for (const row of x) for (let j = 0; j < d; j++) mean[j]! += row[j]! / x.length;
  for (const row of x) for (let j = 0; j < d; j++) std[j]! += (row[j]! - mean[j]!) ** 2 / x.length;
  return { mean, std: std.map((v) => (v > 0 ? Math.sqrt(v) : 1)) };
}

/** Loss and metric (r² for linear, accuracy at 0.5 for logistic) of a model on rows. */
function evaluate(kind: TrainInput['kind'], x: number[][], y: number[], w: number[], b: number) {
  if (!x.length) return { loss: null, value: null };
  let loss = 0;
  let good = 0;
  let mean = 0;
  for (const v of y) mean += v / y.length;
  let ssTot = 0;
  for (let i = 0; i < x.length; i++) {
    let z = b;
    for (let j = 0; j < w.length; j++) z += w[j]! * x[i]![j]!;
    if (kind === 'linear') {
      loss += (z - y[i]!) ** 2;
      ssTot += (y[i]! - mean) ** 2;
    } else {
      const p = Math.min(1 - 1e-12, Math.max(1e-12, sigmoid(z)));
      loss += -(y[i]! * Math.log(p) + (1 - y[i]!) * Math.log(1 - p));
      if ((p >= 0.5 ? 1 : 0) === y[i]) good++;
    }
  }
  if (kind === 'linear') return { loss: loss / x.length, value: ssTot > 0 ? 1 - loss / ssTot : null };
  return { loss: loss / x.length, value: good / x.length };
}

/**
 * Full-batch gradient descent on standardised features. The last `validation_share` of the
 * rows (in the given order) are held out. Weights given from an earlier call continue it, so a
 * long training runs as several tasks with progress and a cancel point between them.
 */
export function train(inp: TrainInput) {
  const d = inp.x[0]!.length;
  const scaling = scalingOf(inp.x);
  const xs = inp.x.map((row) => row.map((v, j) => (v - scaling.mean[j]!) / scaling.std[j]!));
  const nVal = Math.floor(xs.length * inp.validation_share);
  const nTrain = xs.length - nVal;
  const [xt, yt, xv, yv] = [xs.slice(0, nTrain), inp.y.slice(0, nTrain), xs.slice(nTrain), inp.y.slice(nTrain)];
  const w = inp.weights ? [...inp.weights] : new Array<number>(d).fill(0);
  let b = inp.bias ?? 0;
  const metric = inp.kind === 'linear' ? 'r2' : 'accuracy';
  const epochs = [];
  for (let e = 1; e <= inp.epochs; e++) {
    const gw = new Array<number>(d).fill(0);
    let gb = 0;
    for (let i = 0; i < nTrain; i++) {
      let z = b;
      for (let j = 0; j < d; j++) z += w[j]! * xt[i]![j]!;
      // Both losses have the gradient (prediction - y)·x (the linear one up to a factor 2, folded into the rate).
      const err = (inp.kind === 'linear' ? z : sigmoid(z)) - yt[i]!;
      for (let j = 0; j < d; j++) gw[j]! += err * xt[i]![j]!;
      gb += err;
    }
    for (let j = 0; j < d; j++) w[j]! -= inp.learning_rate * (gw[j]! / nTrain + inp.l2 * w[j]!);
    b -= inp.learning_rate * (gb / nTrain);
    const tr = evaluate(inp.kind, xt, yt, w, b);
    const va = evaluate(inp.kind, xv, yv, w, b);
    epochs.push({ epoch: inp.start_epoch + e, loss: tr.loss!, validation_loss: va.loss, metric, value: tr.value, validation_value: va.value });
  }
  return { weights: w, bias: b, scaling, train_rows: nTrain, validation_rows: nVal, epochs };
}
