import { expect } from 'chai';
import { Leases } from '../../core/leases';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

// Two hosts' lease services on one database, with a clock the test moves.
eachDatabase('leader leases (core/leases.ts)', (db) => {
  let t: TestHost;
  let now = Date.parse('2030-01-01T00:00:00Z');
  const clock = { now: () => new Date(now) };
  let a: Leases;
  let b: Leases;
  before(async () => {
    t = await startHost({ db, plugins: [] });
    a = new Leases(t.host.services.db, clock);
    b = new Leases(t.host.services.db, clock);
  });
  after(() => t.stop());

  it('one holder at a time; the holder renews; another takes over once the lease has run out', async () => {
    expect(await a.claim('job', 10_000)).to.equal(true);
    expect(await b.claim('job', 10_000)).to.equal(false);
    now += 9_000;
    expect(await a.claim('job', 10_000)).to.equal(true); // renewed until now + 10 s
    now += 9_000;
    expect(await b.claim('job', 10_000)).to.equal(false);
    expect(await b.holder('job')).to.deep.equal({ name: 'job', owner: a.owner, lease_until: new Date(now + 1_000).toISOString(), held_here: false });
    now += 2_000; // a stopped renewing: its lease ran out
    expect(await b.holder('job')).to.equal(null);
    expect(await b.claim('job', 10_000)).to.equal(true);
    expect(await a.claim('job', 10_000)).to.equal(false);
    expect((await a.holder('job'))!.owner).to.equal(b.owner);
  });

  it('a released lease is free at once; leases of other names are independent', async () => {
    await b.release('job');
    expect(await a.claim('job', 10_000)).to.equal(true);
    expect(await b.claim('other', 10_000)).to.equal(true);
    await b.release('job'); // not b's: nothing changes
    expect((await b.holder('job'))!.owner).to.equal(a.owner);
    const both = await Promise.all([a.claim('race', 5_000), b.claim('race', 5_000)]);
    expect(both.filter(Boolean)).to.have.length(1);
  });
});
