import { expect } from 'chai';
import authPlugin from '../../plugins/auth';
import opsMeshPlugin from '../../plugins/ops-mesh';
import { openStream, startMeshHost, type Stream } from './mesh-helpers';
import { startHost, type TestHost } from '../helpers/host';

describe('hub: who sees which event', () => {
  let t: TestHost;
  before(async () => {
    t = await startMeshHost(['analytics']);
  });
  after(() => t.stop());

  it('sends tenant events to that tenant only, platform events to operators, mesh events to all', async () => {
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
    expect(got('admin')).to.deep.equal(['probe_platform', 'probe_mesh']);
    for (const s of Object.values(streams)) await s.close();
  });
});

describe('hub: a connection lives only as long as its token', () => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ plugins: [authPlugin, opsMeshPlugin], config: { hub: { recheckMs: 100 } } });
  });
  after(() => t.stop());

  const closed = (s: Stream) => new Promise<number>((resolve) => s.ws.once('close', (code) => resolve(code)));

  it('closes the socket (4401) after the token is logged out', async () => {
    const login = await t.request('POST', '/auth/login', { token: null, body: { email: t.admin.email, password: t.admin.password } });
    const token = login.body.access_token as string;
    const s = await openStream(t, token);
    await s.next((m) => m.type === 'snapshot');
    const other = await openStream(t, t.adminToken);
    await other.next((m) => m.type === 'snapshot');
    const code = closed(s);
    expect((await t.request('POST', '/auth/logout', { token })).status).to.be.within(200, 204);
    expect(await code).to.equal(4401);
    // Another token of the same user keeps its connection.
    await new Promise((r) => setTimeout(r, 300));
    expect(other.ws.readyState).to.equal(other.ws.OPEN);
    await other.close();
  });

  it('closes the socket when the token expires', async () => {
    const admin = await t.host.services.db('users').where({ email: t.admin.email }).first();
    const { token } = t.host.services.auth.sign({ id: admin.id, tenantId: admin.tenant_id, role: 'admin' }, 2);
    const s = await openStream(t, token);
    await s.next((m) => m.type === 'snapshot');
    const started = Date.now();
    expect(await closed(s)).to.equal(4401);
    expect(Date.now() - started).to.be.below(4000);
  });
});
