// kernels/__NAME__/worker.ts: the task handlers, run on worker threads. Only zod,
// ../sdk and ../runtime may be imported here: never core, express or knex.
import { serve } from '../runtime';
import { TaskError } from '../sdk';
import manifest from './manifest';

export = serve(manifest, {
  // The input arrives typed and already checked against the manifest's schema.
  ratio: ({ numerator, denominator }) => {
    // A TaskError reaches the caller as it is: here 422 DIVISION_BY_ZERO at body.denominator.
    // Anything else a handler throws is an internal fault: the caller gets a 502 with the
    // request id only, and the host logs the message and stack under that id.
    if (denominator === 0) throw new TaskError('the denominator is zero', { code: 'DIVISION_BY_ZERO', status: 422, loc: ['denominator'] });
    return { ratio: numerator / denominator };
  },
});
