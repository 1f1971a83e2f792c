import { createHistogram } from 'node:perf_hooks';
import { expect } from 'chai';
import { dist, mergeDists } from '../../core/cluster/stats';

// The cluster's /mesh/stats merges each host's timing distribution (core/cluster/stats.ts).
describe('cluster stats: merging hosts\' timing distributions', () => {
  // perf_hooks histograms hold microseconds; the timings are in ms.
  const hist = (values: number[]) => {
    const h = createHistogram();
    for (const v of values) h.record(v * 1000);
    return h;
  };
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  it('answers the percentiles of all samples together, within the histogram precision', () => {
    const merged = mergeDists([dist(hist(range(1, 100))), dist(hist(range(101, 200)))]);
    const all = hist(range(1, 200));
    expect(merged.count).to.equal(200);
    expect(merged.mean).to.be.closeTo(100.5, 0.5);
    expect(merged.max).to.equal(Math.round(all.max) / 1000);
    for (const [q, got] of [[50, merged.p50], [90, merged.p90], [99, merged.p99]] as const) {
      const want = all.percentile(q) / 1000;
      expect(Math.abs(got - want) / want, `p${q}: ${got} against ${want}`).to.be.below(0.02);
    }
  });

  it('weights each host by its count, and gives one host\'s figures unchanged', () => {
    const big = dist(hist(Array(900).fill(10)));
    const small = dist(hist(Array(100).fill(50)));
    const merged = mergeDists([big, small]);
    expect(merged.p50).to.be.closeTo(10, 0.1);
    expect(merged.p90).to.be.closeTo(10, 0.1);
    expect(merged.p99).to.be.closeTo(50, 0.5);
    const one = hist([3, 4, 5]);
    const alone = mergeDists([dist(one), dist(createHistogram())]);
    expect(alone).to.deep.equal({ count: 3, mean: Math.round(one.mean) / 1000, p50: Math.round(one.percentile(50)) / 1000, p90: Math.round(one.percentile(90)) / 1000, p99: Math.round(one.percentile(99)) / 1000, max: Math.round(one.max) / 1000 });
    expect(mergeDists([])).to.include({ count: 0, p50: 0 });
  });
});
