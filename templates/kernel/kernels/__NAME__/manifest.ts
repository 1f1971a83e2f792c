// kernels/__NAME__/manifest.ts: the kernel's tasks, each with its input and output schema.
import { z } from 'zod';
import { defineKernel, task } from '../sdk';

export default defineKernel({
  domain: '__NAME__', // the folder's name: lowercase letters, digits and dashes
  description: 'Ratios of two numbers',
  // This kernel's own default size: 1 node of 1 thread. Config overrides it
  // (mesh.kernels.__NAME__.nodes / .threads, or mesh.nodesPerKernel for every kernel).
  nodes: 1,
  threadsPerNode: 1,
  slo: { latency_p95_ms: 100, error_rate: 0.01 },
  tasks: {
    ratio: task({
      summary: 'numerator / denominator',
      input: z.object({ numerator: z.number(), denominator: z.number() }),
      output: z.object({ ratio: z.number() }),
    }),
  },
});
