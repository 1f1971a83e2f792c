import { expect } from 'chai';
import type { BusEvent } from '../../core/events';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

eachDatabase('action log', (db) => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ db, plugins: [] });
  });
  after(() => t.stop());

  it('records actions, publishes action_taken, and pages newest first with filters', async () => {
    const seen: BusEvent[] = [];
    const off = t.host.services.events.subscribe('action_taken', (e) => seen.push(e));
    const log = t.host.services.actions;
    for (let i = 0; i < 5; i++) {
      await log.record({ source: i % 2 ? 'automated' : 'manual', actor: 'u1', action: 'pause_node', target_type: 'node', target_id: `n${i}`, result: 'succeeded', detail: { i } });
    }
    off();
    expect(seen).to.have.length(5);
    expect(seen[0].data).to.include({ action: 'pause_node', target_id: 'n0' });
    const first = await log.list({ limit: 2 });
    expect(first.actions.map((a) => a.target_id)).to.deep.equal(['n4', 'n3']);
    expect(first.actions[0].detail).to.deep.equal({ i: 4 });
    const second = await log.list({ limit: 2, cursor: first.next_cursor! });
    expect(second.actions.map((a) => a.target_id)).to.deep.equal(['n2', 'n1']);
    const third = await log.list({ limit: 2, cursor: second.next_cursor! });
    expect(third.actions.map((a) => a.target_id)).to.deep.equal(['n0']);
    expect(third.next_cursor).to.equal(null);
    const automated = await log.list({ limit: 10, source: 'automated' });
    expect(automated.actions.map((a) => a.target_id)).to.deep.equal(['n3', 'n1']);
  });

  it('refuses a malformed cursor', async () => {
    let failed = false;
    await t.host.services.actions.list({ limit: 2, cursor: 'garbage' }).catch(() => (failed = true));
    expect(failed).to.equal(true);
  });
});
