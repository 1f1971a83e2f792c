import { expect } from 'chai';
import WebSocket from 'ws';
import { REDIS_URL, eachDatabase, type TestHost } from '../helpers/host';
import { openStream, startMeshHost } from './mesh-helpers';
import { eventually } from '../helpers/eventually';

eachDatabase('mesh health, breakers and the stream', (db) => {
  let t: TestHost;
  let viewer: string;
  let operator: string;
  before(async () => {
    // Heartbeats every 50 ms; three missed beats (150 ms) make a node unhealthy.
    t = await startMeshHost(['probe'], { heartbeatMs: 50, missedHeartbeats: 3, breaker: { volumeThreshold: 4, errorThresholdPercentage: 50, resetTimeoutMs: 60_000 } }, db);
    viewer = (await t.userToken('viewer')).token;
    operator = (await t.userToken('operator')).token;
    await eventually(() => t.host.services.mesh.node('probe-1').health === 'healthy', 5000, 'healthy node');
  });
  after(() => t.stop());

  it('sends health_update over the WebSocket when a worker misses its heartbeats, and stores the incident', async () => {
    const s = await openStream(t, viewer, 'header');
    try {
      await s.next((m) => m.type === 'snapshot');
      s.send({ type: 'subscribe', types: ['health_update'] });
      await s.next((m) => m.type === 'subscribed');
      // spin blocks the worker's event loop: its heartbeat timer cannot fire.
      const busy = t.request('POST', '/kernels/probe/tasks/spin', { body: { ms: 1200 } });
      const down = await s.next((m) => m.type === 'health_update' && m.data.node_id === 'probe-1' && m.data.health === 'unhealthy');
      expect(down.data).to.include({ kernel_id: 'probe', domain: 'probe' });
      expect(down.data.previous).to.be.oneOf(['healthy', 'degraded']);
      expect(down.data.reason).to.match(/thread \d+ missed \d+ heartbeats/);
      expect((await busy).status).to.equal(200);
      const up = await s.next((m) => m.type === 'health_update' && m.data.node_id === 'probe-1' && m.data.health === 'healthy');
      // On the way back the first beat reports the blocked loop's delay: unhealthy -> degraded -> healthy.
      expect(up.data.previous).to.be.oneOf(['unhealthy', 'degraded']);
      expect(s.messages.every((m) => m.type === 'health_update' || m.type === 'snapshot' || m.type === 'subscribed')).to.equal(true);
    } finally {
      await s.close();
    }
    const incidents = await eventually(async () => {
      const r = await t.request('GET', '/health/incidents/recent?domain=probe', { token: viewer });
      // The rows are written after the hub events: wait for the recovery's row too.
      const healths = (r.body.incidents ?? []).filter((i: any) => i.node_id === 'probe-1').map((i: any) => i.health);
      return healths.includes('unhealthy') && healths.includes('healthy') ? r : null;
    }, 10_000, 'incidents');
    const nodeRows = incidents.body.incidents.filter((i: any) => i.node_id === 'probe-1');
    expect(nodeRows.map((i: any) => i.health)).to.include.members(['unhealthy', 'healthy']);
    const first = await t.request('GET', '/health/incidents/recent?domain=probe&limit=1', { token: viewer });
    expect(first.body.incidents).to.have.length(1);
    const second = await t.request('GET', `/health/incidents/recent?domain=probe&limit=1&cursor=${first.body.next_cursor}`, { token: viewer });
    expect(second.body.incidents[0].id).to.not.equal(first.body.incidents[0].id);
    expect(second.body.incidents[0].at <= first.body.incidents[0].at).to.equal(true);
    expect((await t.request('GET', '/health/incidents/recent?cursor=bad', { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', '/health/incidents/recent', { token: null })).status).to.equal(401);
    expect((await t.request('GET', '/health/incidents/recent?limit=0', { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', '/health/incidents/recent?domain=nope', { token: viewer })).status).to.equal(404);
  });

  it('answers /health/domain/{domain} and the kernels component of /health/', async () => {
    const r = await t.request('GET', '/health/domain/probe', { token: null });
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ domain: 'probe', status: 'healthy', breaker: 'closed' });
    expect(r.body.nodes[0]).to.include({ node_id: 'probe-1', state: 'active', health: 'healthy' });
    expect((await t.request('GET', '/health/domain/nope')).status).to.equal(404);
    expect((await t.request('GET', '/health/domain/NOPE!')).status).to.equal(422);
    const all = await t.request('GET', '/health/', { token: null });
    expect(all.body.components.kernels).to.equal('healthy');
    expect(all.body.details.kernels.detail.kernels).to.deep.equal({ probe: 'healthy' });
  });

  it('opens the breaker on failures (automated action, breaker_state event) and isolates the kernel', async () => {
    const s = await openStream(t, viewer);
    try {
      t.host.services.mesh.setControl('probe-1', { error_rate: 1 });
      // Failures count in the breaker's rolling window (with the earlier successes) until it opens.
      const statuses: number[] = [];
      for (let i = 0; i < 10 && !statuses.includes(503); i++) {
        const r = await t.request('POST', '/kernels/probe/tasks/wait', { body: { ms: 1 } });
        statuses.push(r.status);
        if (r.status === 502) expect(r.body.detail).to.match(/injected failure/);
      }
      expect(statuses.filter((x) => x === 502).length).to.be.at.least(2);
      expect(statuses[statuses.length - 1]).to.equal(503);
      const opened = await s.next((m) => m.type === 'breaker_state' && m.data.state === 'open');
      expect(opened.data).to.deep.equal({ kernel_id: 'probe', state: 'open', isolated: true });
      t.host.services.mesh.setControl('probe-1', null);
      const refused = await t.request('POST', '/kernels/probe/tasks/wait', { body: { ms: 1 } });
      expect(refused.status).to.equal(503);
      expect(refused.body.detail).to.match(/circuit breaker is open/);
      const ov = await t.request('GET', '/ops/mesh/overview', { token: viewer });
      expect(ov.body.circuit_breaker).to.deep.equal({ kernel_states: { probe: 'open' }, isolated_kernels: ['probe'] });
      const auto = await eventually(async () => (await t.host.services.actions.list({ limit: 5, source: 'automated', action: 'isolate_kernel' })).actions[0], 2000, 'automated action');
      expect(auto).to.include({ actor: 'breaker', target_id: 'probe', result: 'succeeded' });
      expect(auto.cause).to.match(/\d+ failures of \d+ tasks/);
      const stats = await t.request('GET', '/ops/stats', { token: viewer });
      expect(stats.body.mesh.kernels[0].tasks_failed).to.be.at.least(2);
      expect(stats.body.stream.clients).to.equal(1);
      await t.host.services.mesh.restoreKernel('probe', { source: 'manual', actor: 'test' });
      await s.next((m) => m.type === 'breaker_state' && m.data.state === 'closed');
      expect((await t.request('POST', '/kernels/probe/tasks/wait', { body: { ms: 1 } })).status).to.equal(200);
    } finally {
      await s.close();
    }
  });

  it('records task outcomes in batches for SLOs', async () => {
    const since = new Date(Date.now() - 60_000).toISOString();
    const o = await t.host.services.mesh.outcomes('probe', since);
    expect(o.failed).to.be.at.least(2);
    expect(o.ok).to.be.at.least(2);
    expect(o.durations.length).to.equal(o.ok + o.failed);
  });

  it('refuses a stream without a valid token; answers bad messages with an error; honours ping', async () => {
    let status = 0;
    await openStream(t, null).catch((e: { status: number }) => (status = e.status));
    expect(status).to.equal(401);
    await openStream(t, 'not-a-token').catch((e: { status: number }) => (status = e.status));
    expect(status).to.equal(401);
    const s = await openStream(t, viewer);
    try {
      s.send('this is not json');
      expect((await s.next((m) => m.type === 'error')).data.detail).to.match(/not JSON/);
      s.send({ type: 'subscribe', types: 'all' });
      await s.next((m) => m.type === 'error' && /types/.test(m.data.detail));
      s.send({ type: 'launch' });
      await s.next((m) => m.type === 'error' && /unknown message type "launch"/.test(m.data.detail));
      s.send({ type: 'ping' });
      await s.next((m) => m.type === 'pong');
      expect(s.ws.readyState).to.equal(s.ws.OPEN);
    } finally {
      await s.close();
    }
    void operator;
  });
});

describe('hub: slow clients and fan-out across hosts', () => {
  it('pings clients and drops one that does not answer with a pong', async () => {
    const t = await startMeshHost(['probe'], {}, 'sqlite', { hub: { pingIntervalMs: 100 } });
    try {
      const live = await openStream(t, t.adminToken);
      const mute = new WebSocket(`${t.url.replace('http', 'ws')}/ops/stream?token=${t.adminToken}`, { autoPong: false });
      const closed = new Promise<void>((resolve) => mute.once('close', () => resolve()));
      await closed;
      expect(t.host.services.hub.dropped.unresponsive).to.equal(1);
      expect(t.host.services.hub.clients.size).to.equal(1);
      expect(live.ws.readyState).to.equal(live.ws.OPEN);
      await live.close();
    } finally {
      await t.stop();
    }
  });

  it('drops a client whose send buffer passes the bound', async () => {
    const t = await startMeshHost(['probe'], {}, 'sqlite', { hub: { maxBufferedBytes: 2048 } });
    try {
      const s = await openStream(t, t.adminToken);
      await s.next((m) => m.type === 'snapshot');
      // The client stops reading; the server keeps sending until the bound is passed.
      s.ws.pause();
      (s.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      const big = 'x'.repeat(64 * 1024);
      for (let i = 0; i < 200 && t.host.services.hub.dropped.slow === 0; i++) {
        t.host.services.events.publish('load_test', { big });
        await new Promise((r) => setImmediate(r));
      }
      expect(t.host.services.hub.dropped.slow).to.equal(1);
      expect(t.host.services.hub.clients.size).to.equal(0);
      await s.close();
    } finally {
      await t.stop();
    }
  });

  it('fans events out to the clients of another host through Redis', async () => {
    const channel = `pc-test-${Date.now()}`;
    const a = await startMeshHost(['probe'], {}, 'sqlite', { redis: { url: REDIS_URL }, hub: { channel } });
    const b = await startMeshHost(['probe'], {}, 'sqlite', { redis: { url: REDIS_URL }, hub: { channel } });
    try {
      const s = await openStream(b, b.adminToken);
      await s.next((m) => m.type === 'snapshot');
      const operator = (await a.userToken('operator')).token;
      expect((await a.request('POST', '/mesh/nodes/probe-1/pause', { token: operator })).status).to.equal(200);
      const relayed = await s.next((m) => m.type === 'node_state' && m.data.state === 'paused');
      expect(relayed.origin).to.equal(a.host.services.hub.hostId);
      expect(b.host.services.mesh.node('probe-1').state).to.equal('active');
      // A node's events reach the other host's clients in the order they happened, numbered.
      for (let i = 0; i < 300; i++) a.host.services.events.publish('node_state', { node_id: 'probe-1', kernel_id: 'probe', state: 'active', previous: 'paused', n: i });
      await s.next((x) => x.type === 'node_state' && x.data.n === 299);
      const seen = s.messages.filter((x) => x.type === 'node_state' && typeof x.data.n === 'number').map((x) => ({ n: x.data.n as number, seq: x.seq! }));
      expect(seen.map((x) => x.n)).to.deep.equal([...Array(300).keys()]);
      expect(seen.every((x, i) => i === 0 || x.seq === seen[i - 1]!.seq + 1)).to.equal(true);
      expect(b.host.services.hub.relayGaps).to.equal(0);
      await s.close();
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
