// A handler's TaskError reaches the caller (message, status); anything else it throws is an
// internal fault: a generic 502 naming the request id, the worker's stack in the host's log.
import { expect } from 'chai';
import { BUILTIN_KERNELS, FIXTURE_KERNELS, MESH_PLUGINS } from '../core/mesh-helpers';
import { startHost, type TestHost } from '../helpers/host';
import { capturedLog } from '../helpers/log';

describe('kernel task errors', () => {
  let t: TestHost;
  const { lines, logger } = capturedLog('warn');
  before(async () => {
    t = await startHost({ plugins: MESH_PLUGINS, logger, config: { mesh: { kernelDirs: [BUILTIN_KERNELS, FIXTURE_KERNELS], only: ['faults'], heartbeatMs: 100 } } });
  });
  after(() => t.stop());

  const run = (task: string, body: unknown, requestId?: string) => t.request('POST', `/kernels/faults/tasks/${task}`, { body, headers: requestId ? { 'x-request-id': requestId } : {} });

  it('a TaskError reaches the caller with its message, location and status', async () => {
    expect((await run('divide', { a: 1, b: 4 })).body.output).to.deep.equal({ quotient: 0.25 });
    const zero = await run('divide', { a: 1, b: 0 });
    expect(zero.status).to.equal(422);
    expect(zero.body).to.deep.equal({ detail: [{ loc: ['body', 'b'], msg: 'division by zero', type: 'value_error' }], code: 'DIVISION_BY_ZERO' });
    const busy = await run('busy', {});
    expect(busy.status).to.equal(409);
    expect(busy.body).to.deep.equal({ detail: 'the book is being reorganised; try again later', code: 'BOOK_BUSY' });
  });

  it('an internal fault answers a generic 502 with the request id; the stack is logged', async () => {
    const r = await run('boom', {}, 'req-internal-1');
    expect(r.status).to.equal(502);
    expect(r.body).to.deep.equal({ detail: 'the task failed with an internal error (request id req-internal-1; the host log has the details)', code: 'TASK_INTERNAL_ERROR' });
    expect(r.text).to.not.match(/boom|secret|worker\.js/);
    const logged = lines.find((l) => l.msg === 'kernel task failed' && l.reqId === 'req-internal-1');
    expect(logged, JSON.stringify(lines)).to.not.equal(undefined);
    expect(logged!).to.include({ kernel: 'faults', task: 'boom', node: 'faults-1' });
    expect(logged!.err.message).to.equal('boom: secret at /srv/kernels/faults/worker.js');
    expect(logged!.err.stack).to.match(/at boom .*faults[/\\]worker\.js/);
  });

  it('output that breaks its schema is internal too', async () => {
    const r = await run('bad_output', {}, 'req-bad-1');
    expect(r.status).to.equal(502);
    expect(r.body.detail).to.match(/internal error \(request id req-bad-1;/);
    const logged = lines.find((l) => l.msg === 'kernel task failed' && l.reqId === 'req-bad-1');
    expect(logged!.err.message).to.match(/task "bad_output" produced output that does not match its schema/);
  });
});
