import { expect } from 'chai';
import { openStream, startMeshHost } from './mesh-helpers';
import type { TestHost } from '../helpers/host';

describe('hub: who sees which event', () => {
  let t: TestHost;
  before(async () => {
    t = await startMeshHost(['analytics']);
  });
  after(() => t.stop());

  it('sends tenant events to that tenant (and admins), platform events to operators, mesh events to all', async () => {
    const a = await t.userToken('viewer', 'tenant-a');
    const b = await t.userToken('viewer', 'tenant-b');
    const op = await t.userToken('operator', 'tenant-b');
    const streams = {
      a: await openStream(t, a.token),
      b: await openStream(t, b.token),
      op: await openStream(t, op.token),
      admin: await openStream(t, t.adminToken),
    };
    for (const s of Object.values(streams)) await s.next((m) => m.type === 'snapshot');
    const bus = t.host.services.events;
    bus.publish('probe_tenant', { tenant_id: 'tenant-a', n: 1 });
    bus.publish('probe_platform', { tenant_id: null, n: 2 });
    bus.publish('probe_mesh', { n: 3 });
    // The mesh event is published last: once a client has it, it has everything it will get.
    for (const s of Object.values(streams)) await s.next((m) => m.type === 'probe_mesh');
    const got = (k: keyof typeof streams) => streams[k].messages.filter((m) => m.type.startsWith('probe_')).map((m) => m.type);
    expect(got('a')).to.deep.equal(['probe_tenant', 'probe_mesh']);
    expect(got('b')).to.deep.equal(['probe_mesh']);
    expect(got('op')).to.deep.equal(['probe_platform', 'probe_mesh']);
    expect(got('admin')).to.deep.equal(['probe_tenant', 'probe_platform', 'probe_mesh']);
    for (const s of Object.values(streams)) await s.close();
  });
});
