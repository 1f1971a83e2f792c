import { z } from 'zod';
import { defineKernel, task } from '../sdk';

const order = z.object({
  id: z.string().min(1).max(64),
  side: z.enum(['buy', 'sell']),
  price: z.number().positive().finite(),
  quantity: z.number().positive().finite(),
});

const strategy = z.discriminatedUnion('name', [
  z.object({ name: z.literal('buy_and_hold') }),
  z.object({ name: z.literal('sma_crossover'), fast: z.number().int().min(1).max(1000), slow: z.number().int().min(2).max(5000) }),
  z.object({ name: z.literal('momentum'), lookback: z.number().int().min(1).max(5000) }),
  z.object({ name: z.literal('mean_reversion'), lookback: z.number().int().min(2).max(5000), z_entry: z.number().positive().max(10) }),
]);

export default defineKernel({
  domain: 'trading',
  description: 'Option pricing, portfolio risk by seeded Monte Carlo, and order matching',
  nodes: 2,
  threadsPerNode: 1,
  slo: { latency_p95_ms: 500, error_rate: 0.01 },
  tasks: {
    price_option: task({
      summary: 'Black-Scholes-Merton price and greeks of a European option',
      input: z.object({
        type: z.enum(['call', 'put']),
        spot: z.number().positive().finite(),
        strike: z.number().positive().finite(),
        rate: z.number().min(-1).max(1),
        volatility: z.number().positive().max(10),
        time_years: z.number().positive().max(100),
        dividend_yield: z.number().min(0).max(1).default(0),
      }),
      output: z.object({ price: z.number(), delta: z.number(), gamma: z.number(), vega: z.number(), theta: z.number(), rho: z.number() }),
    }),
    portfolio_risk: task({
      summary: 'Value at risk and expected shortfall of a portfolio by seeded Monte Carlo (correlated normal returns)',
      input: z.object({
        positions: z.array(z.object({ symbol: z.string().min(1).max(32), value: z.number().finite(), mu: z.number().min(-5).max(5), sigma: z.number().min(0).max(5) })).min(1).max(100),
        /** Row-major correlation matrix; identity when absent. */
        correlation: z.array(z.array(z.number().min(-1).max(1))).optional(),
        horizon_days: z.number().int().min(1).max(3650).default(1),
        confidence: z.number().gt(0.5).lt(1).default(0.99),
        paths: z.number().int().min(100).max(200_000).default(10_000),
        seed: z.number().int().min(0).max(2 ** 31 - 1).default(1),
      }),
      output: z.object({ value: z.number(), var: z.number(), cvar: z.number(), expected_pnl: z.number(), pnl_stddev: z.number(), paths: z.number().int(), confidence: z.number() }),
    }),
    match_orders: task({
      summary: 'Price-time priority matching of a batch of limit orders; returns trades and the resting book',
      input: z.object({ orders: z.array(order).min(1).max(50_000) }),
      output: z.object({
        trades: z.array(z.object({ buy_id: z.string(), sell_id: z.string(), price: z.number(), quantity: z.number() })),
        bids: z.array(order),
        asks: z.array(order),
      }),
    }),
    backtest: task({
      summary: 'Backtest long/flat strategies over a price series and rank them by Sharpe ratio (risk-adjusted return)',
      input: z.object({
        prices: z.array(z.number().positive().finite()).min(3).max(100_000),
        strategies: z.array(strategy).min(1).max(50),
        cost_bps: z.number().min(0).max(1000).default(0),
        periods_per_year: z.number().int().min(1).max(100_000).default(252),
      }),
      output: z.object({
        method: z.string(),
        ranking: z.array(z.object({
          rank: z.number().int(),
          strategy: z.string(),
          params: z.record(z.string(), z.unknown()),
          total_return: z.number(),
          annualized_return: z.number(),
          annualized_volatility: z.number(),
          sharpe: z.number().nullable(),
          sortino: z.number().nullable(),
          max_drawdown: z.number(),
          trades: z.number().int(),
          periods: z.number().int(),
        })),
      }),
    }),
  },
});
