import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../core/logger';

/** A logger at `level` whose JSON lines are kept, parsed, in `lines` (for tests of what is logged). */
export function capturedLog(level = 'info'): { lines: Array<Record<string, any>>; logger: Logger } {
  const lines: Array<Record<string, any>> = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { lines, logger: createLogger(level, sink) };
}
