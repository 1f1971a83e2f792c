import { expect } from 'chai';
import WebSocket from 'ws';
import { createClient, openStream, StreamClosedError, type SocketConstructor } from '@platform-control/client';
import { startMeshHost } from '../core/mesh-helpers';
import type { TestHost } from '../helpers/host';

describe('typed client (@platform-control/client) against a host', function () {
  this.timeout(60_000);
  let t: TestHost;
  before(async () => (t = await startMeshHost(['analytics'])));
  after(() => t?.stop());

  it('reads and changes the mesh with typed requests and responses', async () => {
    const c = createClient({ baseUrl: t.url, token: t.adminToken });
    const { data, error } = await c.GET('/mesh/nodes', { params: { query: { state: 'active' } } });
    expect(error).to.equal(undefined);
    expect(data!.nodes).to.have.length(1);
    const node = data!.nodes[0];
    expect(node.domain).to.equal('analytics');
    const paused = await c.POST('/mesh/nodes/{node_id}/pause', { params: { path: { node_id: node.id } } });
    expect(paused.response.status).to.equal(200);
    expect(paused.data!.state).to.equal('paused');
    const resumed = await c.POST('/mesh/nodes/{node_id}/resume', { params: { path: { node_id: node.id } } });
    expect(resumed.data!.state).to.equal('active');
  });

  it('answers the API error body, not an exception: 401 without a token, 404 for an unknown node', async () => {
    const anon = createClient({ baseUrl: t.url });
    const denied = await anon.GET('/mesh/nodes');
    expect(denied.response.status).to.equal(401);
    expect(denied.data).to.equal(undefined);
    expect(denied.error!.code).to.be.a('string').and.match(/^[A-Z_]+$/);
    const c = createClient({ baseUrl: t.url + '/api', token: t.adminToken });
    const missing = await c.POST('/mesh/nodes/{node_id}/pause', { params: { path: { node_id: 'analytics-999' } } });
    expect(missing.response.status).to.equal(404);
    expect(missing.error!.code).to.equal('NOT_FOUND');
  });

  it('streams typed events over ws with the token in a header, filtered by type', async () => {
    const c = createClient({ baseUrl: t.url, token: t.adminToken });
    const stream = openStream({ baseUrl: t.url, token: t.adminToken, types: ['node_state'], WebSocket: WebSocket as unknown as SocketConstructor });
    const subscribed = stream.next('subscribed');
    await stream.opened;
    expect((await subscribed).data.types).to.deep.equal(['node_state']);
    const node = (await c.GET('/mesh/nodes')).data!.nodes[0];
    const seen = stream.next('node_state', (m) => m.data.node_id === node.id && m.data.state === 'paused', 10_000);
    await c.POST('/mesh/nodes/{node_id}/pause', { params: { path: { node_id: node.id } } });
    expect((await seen).data.previous).to.equal('active');
    await c.POST('/mesh/nodes/{node_id}/resume', { params: { path: { node_id: node.id } } });
    stream.close();
    expect((await stream.closed).code).to.equal(1000);
  });

  it('puts the token in the query when asked (as a browser must), and iterates messages', async () => {
    const stream = openStream({ baseUrl: t.url, token: t.adminToken, WebSocket: WebSocket as unknown as SocketConstructor, tokenIn: 'query' });
    const types: string[] = [];
    // Iteration sees the messages from its start: here, from before the socket opens.
    for await (const m of stream) {
      types.push(m.type);
      if (m.type === 'snapshot') stream.ping();
      if (m.type === 'pong') break;
    }
    expect(types[0]).to.equal('snapshot');
    expect(types).to.include('pong');
    stream.close();
  });

  it('rejects `opened` with the close when the token is refused', async () => {
    const stream = openStream({ baseUrl: t.url, token: 'not-a-token', WebSocket: WebSocket as unknown as SocketConstructor });
    const err = await stream.opened.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(StreamClosedError);
    await stream.closed;
  });
});
