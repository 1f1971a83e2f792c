import { expect } from 'chai';
import http from 'node:http';
import { eventually } from '../helpers/eventually';
import { startHost, type TestHost } from '../helpers/host';
import { capturedLog } from '../helpers/log';
import { BUILTIN_KERNELS, FIXTURE_KERNELS, MESH_PLUGINS } from './mesh-helpers';

// A client that closes its connection cancels its task: the answer (503) has no reader and
// the service did nothing wrong, so the log says so at info, not as a failed request.
describe('a client that goes away mid-task', () => {
  let t: TestHost;
  const { lines, logger } = capturedLog('info');
  before(async () => {
    t = await startHost({ plugins: MESH_PLUGINS, logger, config: { mesh: { kernelDirs: [BUILTIN_KERNELS, FIXTURE_KERNELS], only: ['probe'], heartbeatMs: 100 } } });
  });
  after(() => t.stop());

  it('is logged at info with the answer it missed, and no request is logged as failed', async () => {
    const node = t.host.services.mesh.nodeOf('probe-1').node;
    const req = http.request(`${t.url}/kernels/probe/tasks/wait`, { method: 'POST', headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' } });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ ms: 10_000 }));
    await eventually(() => node.inFlight === 1, 5000, 'task in flight');
    req.destroy();
    await eventually(() => lines.some((l) => l.msg === 'client closed the connection before the answer'), 5000, 'the line about the closed connection');
    const gone = lines.find((l) => l.msg === 'client closed the connection before the answer')!;
    expect(gone).to.include({ level: 30, status: 503, detail: 'the task was cancelled' });
    expect(lines.filter((l) => l.msg === 'request failed')).to.deep.equal([]);
  });
});
