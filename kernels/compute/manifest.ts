import { z } from 'zod';
import { defineKernel, task } from '../sdk';

const epoch = z.object({ epoch: z.number().int(), loss: z.number(), validation_loss: z.number().nullable(), metric: z.string(), value: z.number().nullable(), validation_value: z.number().nullable() });

export default defineKernel({
  domain: 'compute',
  description: 'Compute benchmarks of the machine (matrix multiply, memory bandwidth) and training of small linear and logistic models by gradient descent',
  nodes: 1,
  threadsPerNode: 1,
  slo: { latency_p95_ms: 20_000, error_rate: 0.05 },
  tasks: {
    cpu_benchmark: task({
      summary: 'Dense float64 matrix multiply (GFLOP/s, best of repeats) and memory copy bandwidth (GB/s) on one worker thread',
      input: z.object({
        matrix_size: z.number().int().min(16).max(1024).default(256),
        repeats: z.number().int().min(1).max(20).default(3),
        memory_mb: z.number().int().min(1).max(512).default(64),
      }),
      output: z.object({
        device: z.literal('cpu'),
        cpu_model: z.string(),
        threads: z.number().int(),
        matmul: z.object({ n: z.number().int(), repeats: z.number().int(), best_ms: z.number(), median_ms: z.number(), gflops: z.number(), checksum: z.number() }),
        memory: z.object({ bytes: z.number().int(), repeats: z.number().int(), best_ms: z.number(), copy_gbps: z.number() }),
      }),
    }),
    train: task({
      summary: 'Full-batch gradient descent of a linear (squared error) or logistic (log loss) model on standardised features; continues from given weights; per-epoch loss and metric on a training and a validation part',
      input: z.object({
        kind: z.enum(['linear', 'logistic']),
        x: z.array(z.array(z.number().finite()).min(1).max(64)).min(2).max(50_000),
        y: z.array(z.number().finite()).min(2).max(50_000),
        epochs: z.number().int().min(1).max(1000),
        learning_rate: z.number().gt(0).max(10).default(0.1),
        l2: z.number().min(0).max(10).default(0),
        validation_share: z.number().min(0).max(0.5).default(0.2),
        start_epoch: z.number().int().min(0).default(0),
        weights: z.array(z.number().finite()).max(64).optional(),
        bias: z.number().finite().optional(),
      }),
      output: z.object({
        weights: z.array(z.number()),
        bias: z.number(),
        scaling: z.object({ mean: z.array(z.number()), std: z.array(z.number()) }),
        train_rows: z.number().int(),
        validation_rows: z.number().int(),
        epochs: z.array(epoch),
      }),
    }),
  },
});
