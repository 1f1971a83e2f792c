import { z } from 'zod';
import { readSnapshot } from '../../core/db';
import { invalid } from '../../core/errors';
import { createServiceRef, definePlugin, provide } from '../../core/plugin';
import { core } from '../../core/services';
import { countMigrations, RequestCounter } from './counts';
import { activeTenants, BUCKET_MS, bucketStarts, figures, keyOf, zero, type Bucket } from './figures';

const counterRef = createServiceRef<RequestCounter>('launch-analytics.request-counter');

const windowQuery = z.object({
  since: z.iso.datetime().optional().describe('Start (default: 30 days before until)'),
  until: z.iso.datetime().optional().describe('End, exclusive (default: now)'),
});
const figuresSchema = z.object({ signups: z.number().int(), users: z.number().int(), activations: z.number().int(), active_tenants: z.number().int(), requests: z.number().int(), request_errors: z.number().int(), tasks: z.number().int(), task_errors: z.number().int() });
const method = z.object({ method: z.string(), window: z.object({ since: z.string(), until: z.string() }), inputs: z.array(z.string()) });
const INPUTS = ['tenants.created_at', 'users.created_at', 'task_outcomes (ok, tenant_id, at)', 'actions (tenant_id, created_at)', 'launch_request_counts (requests and 5xx by hour, counted by this plugin since it was loaded)'];

function windowOf(q: { since?: string; until?: string }, bucket: Bucket | null) {
  const until = q.until ? new Date(q.until) : new Date();
  const since = q.since ? new Date(q.since) : new Date(until.getTime() - 30 * 86_400_000);
  if (since >= until) throw invalid(['query', 'since'], 'since must be before until');
  if (bucket && (until.getTime() - since.getTime()) / BUCKET_MS[bucket] > 1000) throw invalid(['query', 'bucket'], 'at most 1000 buckets: widen the bucket or narrow the window');
  return { since: since.toISOString(), until: until.toISOString(), sinceDate: since, untilDate: until };
}

export default definePlugin({
  id: 'launch-analytics',
  prefix: '/analytics/launch',
  deps: { db: core.db, counter: counterRef },
  provides: [
    provide(counterRef, {
      deps: { db: core.db, log: core.log, pipeline: core.pipeline },
      factory: ({ db, log, pipeline }) => new RequestCounter(db, log, pipeline),
      start: (c) => c.start(),
      stop: (c) => c.stop(),
    }),
  ],
  migrations: countMigrations,
  routes: (route) => [
    route({
      method: 'get',
      path: '/summary',
      summary: 'Launch figures over a window: sign-ups, users, activations (first successful task), active tenants, requests, tasks and errors',
      access: 'admin',
      query: windowQuery,
      response: z.object({ totals: figuresSchema, activation_rate: z.number().nullable() }).extend(method.shape),
      errors: [422],
      handler: async ({ query, services }) => {
        const w = windowOf(query, null);
        await services.counter.flush();
        const { byDay, active } = await readSnapshot(services.db, async (trx) => ({ byDay: await figures(trx, w.since, w.until, 'day'), active: await activeTenants(trx, w.since, w.until) }));
        const totals = zero();
        for (const f of byDay.values()) for (const k of Object.keys(totals) as Array<keyof typeof totals>) totals[k] += f[k];
        totals.active_tenants = active;
        return {
          totals,
          // Of the tenants that signed up in the window, how many ran a successful task (in it).
          activation_rate: totals.signups ? Math.round((Math.min(totals.activations, totals.signups) / totals.signups) * 10_000) / 10_000 : null,
          method: 'counts of stored records in [since, until); active tenants counted distinct over the whole window; activation = a tenant\'s first successful task',
          window: { since: w.since, until: w.until },
          inputs: INPUTS,
        };
      },
    }),
    route({
      method: 'get',
      path: '/timeseries',
      summary: 'The launch figures by day or hour',
      access: 'admin',
      query: windowQuery.extend({ bucket: z.enum(['hour', 'day']).default('day') }),
      response: z.object({ bucket: z.enum(['hour', 'day']), series: z.array(figuresSchema.extend({ start: z.string() })) }).extend(method.shape),
      errors: [422],
      handler: async ({ query, services }) => {
        const w = windowOf(query, query.bucket);
        await services.counter.flush();
        const byKey = await readSnapshot(services.db, (trx) => figures(trx, w.since, w.until, query.bucket));
        const series = bucketStarts(w.sinceDate, w.untilDate, query.bucket).map((start) => ({ start, ...(byKey.get(keyOf(start, query.bucket)) ?? zero()) }));
        return {
          bucket: query.bucket,
          series,
          method: `counts of stored records grouped by ${query.bucket} (UTC); requests are counted by the hour`,
          window: { since: w.since, until: w.until },
          inputs: INPUTS,
        };
      },
    }),
  ],
});
