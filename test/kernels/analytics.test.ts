import { expect } from 'chai';
import type { TestHost } from '../helpers/host';
import { startMeshHost } from '../core/mesh-helpers';

describe('analytics kernel', () => {
  let t: TestHost;
  before(async () => {
    t = await startMeshHost(['analytics']);
  });
  after(() => t.stop());
  const run = (task: string, body: unknown) => t.request('POST', `/kernels/analytics/tasks/${task}`, { body });

  it('describes a series and computes percentiles', async () => {
    const d = await run('describe', { values: [2, 4, 4, 4, 5, 5, 7, 9] });
    expect(d.body.output).to.include({ count: 8, sum: 40, mean: 5, min: 2, max: 9, median: 4.5 });
    expect(d.body.output.variance).to.be.closeTo(32 / 7, 1e-9);
    const p = await run('percentiles', { values: Array.from({ length: 101 }, (_, i) => i), percentiles: [0, 50, 99] });
    expect(p.body.output.percentiles).to.deep.equal([{ p: 0, value: 0 }, { p: 50, value: 50 }, { p: 99, value: 99 }]);
    expect((await run('describe', { values: [] })).status).to.equal(422);
    expect((await run('percentiles', { values: [1], percentiles: [101] })).status).to.equal(422);
  });

  it('aggregates rows by key', async () => {
    const r = await run('aggregate', { rows: [{ key: 'b', value: 1 }, { key: 'a', value: 2 }, { key: 'b', value: 3 }] });
    expect(r.body.output.groups).to.deep.equal([
      { key: 'a', count: 1, sum: 2, min: 2, max: 2, mean: 2 },
      { key: 'b', count: 2, sum: 4, min: 1, max: 3, mean: 2 },
    ]);
  });

  it('fits a regression line and refuses a degenerate one', async () => {
    const r = await run('regression', { x: [1, 2, 3, 4], y: [3, 5, 7, 9] });
    expect(r.body.output.slope).to.be.closeTo(2, 1e-12);
    expect(r.body.output.intercept).to.be.closeTo(1, 1e-12);
    expect(r.body.output.r2).to.be.closeTo(1, 1e-12);
    const flat = await run('regression', { x: [1, 1], y: [1, 2] });
    expect(flat.status).to.equal(422);
    expect(flat.body.detail[0]).to.include({ msg: 'all x values are equal: the slope is undefined' });
    expect((await run('regression', { x: [1, 2, 3], y: [1, 2] })).status).to.equal(422);
  });

  it('forecasts a seasonal series with Holt-Winters and a trend with Holt', async () => {
    const season = [10, 20, 30, 20];
    const series = Array.from({ length: 24 }, (_, i) => season[i % 4] + i);
    const hw = await run('forecast', { series, horizon: 4, season_length: 4, alpha: 0.5, beta: 0.3, gamma: 0.3 });
    expect(hw.body.output.method).to.equal('holt_winters');
    const expected = [0, 1, 2, 3].map((h) => season[(24 + h) % 4] + 24 + h);
    hw.body.output.forecast.forEach((v: number, i: number) => expect(v).to.be.closeTo(expected[i], 3));
    const holt = await run('forecast', { series: [1, 2, 3, 4, 5, 6], horizon: 2 });
    expect(holt.body.output.method).to.equal('holt');
    expect(holt.body.output.forecast[0]).to.be.closeTo(7, 0.5);
    expect((await run('forecast', { series: [1, 2, 3, 4, 5], horizon: 2, season_length: 4 })).status).to.equal(422);
  });
});
