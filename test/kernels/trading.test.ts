import { expect } from 'chai';
import type { TestHost } from '../helpers/host';
import { startMeshHost } from '../core/mesh-helpers';

describe('trading kernel', () => {
  let t: TestHost;
  before(async () => {
    t = await startMeshHost(['trading']);
  });
  after(() => t.stop());
  const run = (task: string, body: unknown) => t.request('POST', `/kernels/trading/tasks/${task}`, { body });

  it('prices a European option (Black-Scholes) with put-call parity', async () => {
    const base = { spot: 100, strike: 100, rate: 0.05, volatility: 0.2, time_years: 1 };
    const call = await run('price_option', { type: 'call', ...base });
    const put = await run('price_option', { type: 'put', ...base });
    expect(call.status).to.equal(200);
    expect(call.body.output.price).to.be.closeTo(10.4506, 1e-3);
    expect(put.body.output.price).to.be.closeTo(5.5735, 1e-3);
    expect(call.body.output.price - put.body.output.price).to.be.closeTo(100 - 100 * Math.exp(-0.05), 1e-6);
    expect(call.body.output.delta).to.be.closeTo(0.6368, 1e-3);
    const bad = await run('price_option', { type: 'swap', ...base, spot: -1 });
    expect(bad.status).to.equal(422);
    expect(bad.body.detail.map((d: any) => d.loc.join('.'))).to.include.members(['body.type', 'body.spot']);
  });

  it('computes VaR by seeded Monte Carlo: reproducible from the seed, larger with more volatility', async () => {
    const input = { positions: [{ symbol: 'A', value: 1e6, mu: 0.05, sigma: 0.2 }, { symbol: 'B', value: 5e5, mu: 0.03, sigma: 0.3 }], correlation: [[1, 0.5], [0.5, 1]], paths: 5000, seed: 7 };
    const a = await run('portfolio_risk', input);
    const b = await run('portfolio_risk', input);
    expect(a.body.output).to.deep.equal(b.body.output);
    expect(a.body.output.cvar).to.be.at.least(a.body.output.var);
    // One-day 99% VaR of this portfolio is near 2.33 sigma of its daily P&L.
    expect(a.body.output.var).to.be.closeTo(2.33 * a.body.output.pnl_stddev, 0.2 * a.body.output.var);
    const wild = await run('portfolio_risk', { ...input, positions: input.positions.map((p) => ({ ...p, sigma: p.sigma * 2 })) });
    expect(wild.body.output.var).to.be.above(a.body.output.var * 1.5);
    const notPd = await run('portfolio_risk', { ...input, correlation: [[1, 2 / 2], [1, 1]] });
    expect(notPd.status).to.equal(422);
    expect(notPd.body.detail[0].loc).to.deep.equal(['body', 'correlation']);
  });

  it('matches orders by price-time priority', async () => {
    const r = await run('match_orders', {
      orders: [
        { id: 's1', side: 'sell', price: 101, quantity: 5 },
        { id: 's2', side: 'sell', price: 100, quantity: 5 },
        { id: 'b1', side: 'buy', price: 101, quantity: 7 },
        { id: 'b2', side: 'buy', price: 99, quantity: 1 },
      ],
    });
    expect(r.body.output.trades).to.deep.equal([
      { buy_id: 'b1', sell_id: 's2', price: 100, quantity: 5 },
      { buy_id: 'b1', sell_id: 's1', price: 101, quantity: 2 },
    ]);
    expect(r.body.output.asks).to.deep.equal([{ id: 's1', side: 'sell', price: 101, quantity: 3 }]);
    expect(r.body.output.bids.map((o: any) => o.id)).to.deep.equal(['b2']);
    expect((await run('match_orders', { orders: [{ id: 'x', side: 'buy', price: 1, quantity: 1 }, { id: 'x', side: 'sell', price: 1, quantity: 1 }] })).status).to.equal(422);
  });
});
