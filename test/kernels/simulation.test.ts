import { expect } from 'chai';
import type { TestHost } from '../helpers/host';
import { startMeshHost } from '../core/mesh-helpers';

// The tasks the autonomous/agi/enterprise plugins run: queue simulation, bootstrap totals,
// A/B significance, sequence mining (analytics) and strategy backtests (trading).
describe('simulation, A/B and backtest kernel tasks', () => {
  let t: TestHost;
  before(async () => {
    t = await startMeshHost(['analytics', 'trading']);
  });
  after(() => t.stop());
  const run = (kernel: string, task: string, body: unknown) => t.request('POST', `/kernels/${kernel}/tasks/${task}`, { body });
  const queue = { interarrival_ms: [10, 12, 8, 9, 11], service_ms: [15, 18, 20, 16], servers: 2, tasks: 500, replications: 5, latency_target_ms: 30 };

  it('repeats a queue simulation exactly with the same seed, and differs with another', async () => {
    const a = await run('analytics', 'simulate_queue', { ...queue, seed: 42 });
    const b = await run('analytics', 'simulate_queue', { ...queue, seed: 42 });
    const c = await run('analytics', 'simulate_queue', { ...queue, seed: 43 });
    expect(a.status).to.equal(200);
    expect(a.body.output).to.deep.equal(b.body.output);
    expect(a.body.output.replication_means_ms).to.not.deep.equal(c.body.output.replication_means_ms);
    expect(a.body.output.seed).to.equal(42);
    // Two servers, mean service 17.25 ms, mean gap 10 ms: utilisation near 17.25 / 20.
    expect(a.body.output.utilisation.mean).to.be.within(0.7, 0.95);
  });

  it('queues grow with load: a load factor of 3 overloads two servers', async () => {
    const base = await run('analytics', 'simulate_queue', { ...queue, seed: 1 });
    const heavy = await run('analytics', 'simulate_queue', { ...queue, seed: 1, load_factor: 3 });
    expect(heavy.body.output.wait_ms.p95).to.be.greaterThan(base.body.output.wait_ms.p95 * 5);
    expect((await run('analytics', 'simulate_queue', { ...queue, servers: 0, seed: 1 })).status).to.equal(422);
    expect((await run('analytics', 'simulate_queue', { ...queue, tasks: 100_000, replications: 200, seed: 1 })).status).to.equal(422);
  });

  it('bootstraps totals reproducibly', async () => {
    const body = { sample: [1, 2, 3], periods: 30, factor: 2, replications: 500, seed: 7 };
    const a = await run('analytics', 'simulate_totals', body);
    expect(a.body.output).to.deep.equal((await run('analytics', 'simulate_totals', body)).body.output);
    expect(a.body.output.total.mean).to.be.closeTo(120, 6);
  });

  it("compares two arms with Fisher's exact test", async () => {
    const r = await run('analytics', 'ab_test', { a: { successes: 10, trials: 10 }, b: { successes: 2, trials: 10 } });
    // P(B <= 2 | margins 12 of 20) = C(12,2)C(8,8)/C(20,10) = 66 / 184756.
    expect(r.body.output.fisher_p_b_lower).to.be.closeTo(66 / 184756, 1e-12);
    expect(r.body.output.fisher_p_b_higher).to.equal(1);
    expect(r.body.output.z).to.be.lessThan(-3);
    const same = await run('analytics', 'ab_test', { a: { successes: 5, trials: 5, latency_ms: [1, 2, 3] }, b: { successes: 5, trials: 5, latency_ms: [10, 11, 12] } });
    expect(same.body.output.z).to.equal(null);
    expect(same.body.output.latency.p_greater).to.be.lessThan(0.001);
    expect((await run('analytics', 'ab_test', { a: { successes: 6, trials: 5 }, b: { successes: 1, trials: 5 } })).status).to.equal(422);
  });

  it('finds repeated sequences', async () => {
    const r = await run('analytics', 'frequent_sequences', { streams: [['a', 'b', 'c', 'a', 'b', 'c', 'x'], ['a', 'b', 'c']], min_count: 3 });
    expect(r.body.output.sequences[0]).to.deep.equal({ sequence: ['a', 'b', 'c'], count: 3 });
    expect(r.body.output.sequences.map((s: { sequence: string[] }) => s.sequence.join(''))).to.include.members(['ab', 'bc']);
  });

  it('backtests strategies and ranks them by Sharpe ratio', async () => {
    const up = Array.from({ length: 60 }, (_, i) => 100 * 1.01 ** i + (i % 2 ? 0.5 : -0.5));
    const r = await run('trading', 'backtest', { prices: up, strategies: [{ name: 'buy_and_hold' }, { name: 'momentum', lookback: 5 }, { name: 'sma_crossover', fast: 3, slow: 10 }] });
    expect(r.status).to.equal(200);
    const hold = r.body.output.ranking.find((x: { strategy: string }) => x.strategy === 'buy_and_hold');
    expect(hold.total_return).to.be.closeTo(up[59]! / up[0]! - 1, 1e-9);
    expect(r.body.output.ranking.map((x: { rank: number }) => x.rank)).to.deep.equal([1, 2, 3]);
    const sharpes = r.body.output.ranking.map((x: { sharpe: number }) => x.sharpe);
    expect([...sharpes].sort((a, b) => b - a)).to.deep.equal(sharpes);
    expect((await run('trading', 'backtest', { prices: up, strategies: [{ name: 'sma_crossover', fast: 10, slow: 3 }] })).status).to.equal(422);
  });
});
