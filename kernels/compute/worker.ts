import os from 'node:os';
import { serve } from '../runtime';
import { TaskInputError } from '../sdk';
import { benchmark, train } from './lib';
import manifest from './manifest';

export = serve(manifest, {
  cpu_benchmark: ({ matrix_size, repeats, memory_mb }) => ({
    device: 'cpu' as const,
    cpu_model: os.cpus()[0]?.model ?? 'unknown',
    threads: 1,
    ...benchmark(matrix_size, repeats, memory_mb),
  }),
  train: (input) => {
    if (input.x.length !== input.y.length) throw new TaskInputError(`x has ${input.x.length} rows but y has ${input.y.length}`, ['y']);
    const d = input.x[0]!.length;
    const ragged = input.x.findIndex((r) => r.length !== d);
    if (ragged >= 0) throw new TaskInputError(`row ${ragged} has ${input.x[ragged]!.length} features, the first has ${d}`, ['x', ragged]);
    if (input.weights && input.weights.length !== d) throw new TaskInputError(`${input.weights.length} weights for ${d} features`, ['weights']);
    if (input.kind === 'logistic' && input.y.some((v) => v !== 0 && v !== 1)) throw new TaskInputError('a logistic model needs labels 0 or 1', ['y']);
    return train(input);
  },
});
