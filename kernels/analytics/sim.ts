// Seeded simulation routines of the analytics kernel (kernels/numeric.ts): a multi-server FIFO queue simulated
// event by event, and a bootstrap Monte Carlo of totals. Same input and seed → same output.
import { prng as seeded } from '../numeric';


/** A draw from an empirical sample (bootstrap resampling). */
function draw(rand: () => number, sample: number[]): number {
  return sample[Math.floor(rand() * sample.length)]!;
}

export interface QueueInput {
  interarrival_ms: number[];
  service_ms: number[];
  servers: number;
  load_factor: number;
  tasks: number;
  replications: number;
  latency_target_ms: number;
  seed: number;
}

/**
 * A c-server FIFO queue, simulated task by task: arrivals and service times are drawn from
 * the measured samples (inter-arrival times divided by the load factor), each task takes the
 * server that frees first. Returns per-task sojourn (wait + service) and wait times of all
 * replications, and each replication's utilisation.
 */
export function simulateQueue(q: QueueInput) {
  const rand = seeded(q.seed);
  const sojourn: number[] = [];
  const waits: number[] = [];
  const utilisation: number[] = [];
  const means: number[] = [];
  for (let r = 0; r < q.replications; r++) {
    const free = new Float64Array(q.servers);
    let clock = 0;
    let busy = 0;
    let sum = 0;
    let lastEnd = 0;
    for (let i = 0; i < q.tasks; i++) {
      clock += draw(rand, q.interarrival_ms) / q.load_factor;
      let s = 0;
      for (let j = 1; j < q.servers; j++) if (free[j]! < free[s]!) s = j;
      const start = Math.max(clock, free[s]!);
      const service = draw(rand, q.service_ms);
      free[s] = start + service;
      busy += service;
      lastEnd = Math.max(lastEnd, free[s]!);
      waits.push(start - clock);
      sojourn.push(start - clock + service);
      sum += start - clock + service;
    }
    utilisation.push(lastEnd > 0 ? busy / (lastEnd * q.servers) : 0);
    means.push(sum / q.tasks);
  }
  return { sojourn, waits, utilisation, means };
}

/** Totals over `periods` periods, each drawn from the measured per-period sample and scaled. */
export function bootstrapTotals(sample: number[], periods: number, factor: number, replications: number, seed: number): number[] {
  const rand = seeded(seed);
  const totals: number[] = [];
  for (let r = 0; r < replications; r++) {
    let t = 0;
    for (let i = 0; i < periods; i++) t += draw(rand, sample) * factor;
    totals.push(t);
  }
  return totals;
}
