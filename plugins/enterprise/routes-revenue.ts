// Revenue optimisation on the trading kernel: strategies backtested over supplied prices or a
// stored dataset (a memory object whose content is JSON {"prices": [...]}) and ranked by
// risk-adjusted return (Sharpe ratio). Runs are resources: queued → running → succeeded | failed.
import crypto from 'node:crypto';
import { z } from 'zod';
import { errorText, invalid, Unprocessable } from '../../core/errors';
import type { RouteMaker } from '../../core/plugin';
import { tenantScope } from '../../core/tenancy';
import type { Deps } from './deps';

/** The strategies the trading kernel's backtest task implements, with the grid tried by default. */
const STRATEGIES = [
  { name: 'buy_and_hold', description: 'Hold the asset over the whole series', params: {}, grid: [{}] },
  { name: 'sma_crossover', description: 'Long while the fast simple moving average is above the slow one', params: { fast: 'int', slow: 'int' }, grid: [{ fast: 5, slow: 20 }, { fast: 10, slow: 50 }, { fast: 20, slow: 100 }] },
  { name: 'momentum', description: 'Long while the price is above its value `lookback` periods ago', params: { lookback: 'int' }, grid: [{ lookback: 10 }, { lookback: 20 }, { lookback: 60 }] },
  { name: 'mean_reversion', description: 'Long when the price is z_entry standard deviations below its moving mean, flat at the mean', params: { lookback: 'int', z_entry: 'number' }, grid: [{ lookback: 20, z_entry: 1 }, { lookback: 20, z_entry: 2 }] },
] as const;

// A strategy's shape is the trading kernel's (its backtest task input): checked against it before the run is accepted.
const strategy = z.object({ name: z.enum(['buy_and_hold', 'sma_crossover', 'momentum', 'mean_reversion']) }).loose();
const runSchema = z.object({ id: z.string(), tenant_id: z.string(), state: z.enum(['queued', 'running', 'succeeded', 'failed']), inputs: z.unknown(), result: z.unknown(), error: z.string().nullable(), created_by: z.string(), created_at: z.string(), finished_at: z.string().nullable() });
const toRun = (r: Record<string, any>) => ({ id: r.id, tenant_id: r.tenant_id, state: r.state, inputs: JSON.parse(r.inputs), result: r.result ? JSON.parse(r.result) : null, error: r.error ?? null, created_by: r.created_by, created_at: r.created_at, finished_at: r.finished_at ?? null });

export const revenueRoutes = (route: RouteMaker<Deps>) => [
  route({
    method: 'get',
    path: '/revenue/strategies',
    summary: 'The trading strategies the optimiser backtests, each with its best result in the tenant\'s latest finished optimisation',
    access: 'viewer',
    feature: 'enterprise',
    response: z.object({ strategies: z.array(z.object({ name: z.string(), description: z.string(), params: z.record(z.string(), z.string()), default_grid: z.array(z.record(z.string(), z.number())), latest: z.unknown() })), optimization_id: z.string().nullable(), next_cursor: z.string().nullable() }),
    handler: async ({ caller, services }) => {
      const last = await tenantScope(services.db, caller!).select('enterprise_optimizations').where('state', 'succeeded').orderBy('created_at', 'desc').first();
      const ranking = (last ? JSON.parse(last.result).ranking : []) as Array<{ strategy: string }>;
      return { strategies: STRATEGIES.map((s) => ({ name: s.name, description: s.description, params: s.params as Record<string, string>, default_grid: s.grid as unknown as Array<Record<string, number>>, latest: ranking.find((r) => r.strategy === s.name) ?? null })), optimization_id: last?.id ?? null, next_cursor: null };
    },
  }),
  route({
    method: 'post',
    path: '/revenue/optimize/trading',
    summary: 'Backtest strategies on the trading kernel (202) over supplied prices or a stored dataset; ranked by Sharpe ratio. Poll GET /enterprise/revenue/optimizations/{id}',
    access: 'member',
    feature: 'enterprise',
    body: z
      .object({
        prices: z.array(z.number().positive().finite()).min(3).max(100_000).optional(),
        dataset_id: z.uuid().optional(),
        strategies: z.array(strategy).min(1).max(50).optional(),
        cost_bps: z.number().min(0).max(1000).default(0),
        periods_per_year: z.number().int().min(1).max(100_000).default(252),
      })
      .strict(),
    response: runSchema,
    status: 202,
    errors: [404, 422],
    handler: async ({ body, caller, services }) => {
      if (!!body.prices === !!body.dataset_id) throw invalid(['body', 'prices'], 'give either prices or dataset_id');
      let prices = body.prices;
      const scope = tenantScope(services.db, caller!);
      if (body.dataset_id) {
        const m = await scope.get('enterprise_memory', { id: body.dataset_id }, 'Dataset');
        const parsed = z.object({ prices: z.array(z.number().positive().finite()).min(3).max(100_000) }).safeParse((() => { try { return JSON.parse(String(m.content)); } catch { return null; } })());
        if (!parsed.success) throw invalid(['body', 'dataset_id'], 'the memory object\'s content is not JSON {"prices": [at least 3 positive numbers]}');
        prices = parsed.data.prices;
      }
      const strategies = body.strategies ?? STRATEGIES.flatMap((s) => s.grid.map((g) => ({ name: s.name, ...g })));
      const input = { prices: prices!, strategies, cost_bps: body.cost_bps, periods_per_year: body.periods_per_year };
      const issues = services.mesh.validateInput('trading', 'backtest', input);
      if (issues.length) throw new Unprocessable(issues);
      const at = services.clock.now().toISOString();
      const row = { id: crypto.randomUUID(), state: 'queued', inputs: JSON.stringify({ source: body.dataset_id ? { dataset_id: body.dataset_id } : 'supplied', periods: prices!.length, strategies, cost_bps: body.cost_bps, periods_per_year: body.periods_per_year }), result: null, error: null, created_by: caller!.id, finished_at: null, created_at: at, updated_at: at };
      await scope.insert('enterprise_optimizations', row);
      await services.actions.record({ source: 'manual', actor: caller!.id, action: 'optimize_trading', target_type: 'optimization', target_id: row.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: { strategies: strategies.length } });
      const set = (patch: Record<string, unknown>) => services.db('enterprise_optimizations').where({ id: row.id }).update({ ...patch, updated_at: services.clock.now().toISOString() });
      services.jobs.add('trading optimisation', (async () => {
        await set({ state: 'running' });
        services.events.publish('optimization_status', { optimization_id: row.id, tenant_id: caller!.tenantId, state: 'running' });
        try {
          const out = await services.mesh.run('trading', 'backtest', input, { caller });
          await set({ state: 'succeeded', result: JSON.stringify(out), finished_at: services.clock.now().toISOString() });
          services.events.publish('optimization_status', { optimization_id: row.id, tenant_id: caller!.tenantId, state: 'succeeded' });
        } catch (err) {
          const msg = errorText(err);
          await set({ state: 'failed', error: msg, finished_at: services.clock.now().toISOString() });
          services.events.publish('optimization_status', { optimization_id: row.id, tenant_id: caller!.tenantId, state: 'failed' });
        }
      })());
      return toRun({ ...row, tenant_id: caller!.tenantId });
    },
  }),
  route({
    method: 'get',
    path: '/revenue/optimizations/{optimization_id}',
    summary: 'One trading optimisation run with its ranking (beyond the spec: the 202 of optimize/trading)',
    access: 'viewer',
    feature: 'enterprise',
    params: z.object({ optimization_id: z.uuid() }),
    response: runSchema,
    errors: [404, 422],
    handler: async ({ params, caller, services }) => toRun(await tenantScope(services.db, caller!).get('enterprise_optimizations', { id: params.optimization_id }, 'Optimisation')),
  }),
];
