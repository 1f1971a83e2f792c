import { expect } from 'chai';
import { openStream, startMeshHost } from './mesh-helpers';
import { eventually } from '../helpers/eventually';

describe('live stream: a slow client', () => {
  it('does not hold back the others: they get every event, in order, while it is dropped', async () => {
    const t = await startMeshHost(['probe'], {}, 'sqlite', { hub: { maxBufferedBytes: 256 * 1024 } });
    try {
      const slow = await openStream(t, t.adminToken);
      const fast = await Promise.all([openStream(t, t.adminToken), openStream(t, t.adminToken)]);
      for (const s of [slow, ...fast]) await s.next((m) => m.type === 'snapshot');
      // The slow client stops reading: the server's send buffer for it fills.
      slow.ws.pause();
      (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      const big = 'x'.repeat(64 * 1024);
      const N = 200;
      for (let i = 0; i < N; i++) {
        t.host.services.events.publish('load_test', { seq: i, big });
        await new Promise((r) => setImmediate(r));
      }
      for (const s of fast) {
        await eventually(() => expect(s.messages.filter((m) => m.type === 'load_test').length).to.equal(N));
        expect(s.messages.filter((m) => m.type === 'load_test').map((m) => m.data.seq)).to.deep.equal(Array.from({ length: N }, (_, i) => i));
      }
      expect(t.host.services.hub.dropped.slow).to.equal(1);
      expect(t.host.services.hub.clients.size).to.equal(2);
      for (const s of [slow, ...fast]) await s.close();
    } finally {
      await t.stop();
    }
  });
});
