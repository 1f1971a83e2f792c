import { z } from 'zod';
import type { Config } from '../../core/config';
import { outcomeCounts, outcomePercentiles } from '../../core/mesh/outcomes';
import { kernelId } from '../../core/mesh/schemas';
import { definePlugin } from '../../core/plugin';
import { core, type Services } from '../../core/services';

const round = (x: number, digits = 6) => Math.round(x * 10 ** digits) / 10 ** digits;

const report = z.object({
  domain: z.string(),
  objective: z.object({ availability: z.number(), latency_p99_ms: z.number(), window_seconds: z.number() }),
  window: z.object({ since: z.string(), until: z.string() }),
  tasks: z.number().int(),
  succeeded: z.number().int(),
  failed: z.number().int(),
  success_ratio: z.number().nullable(),
  latency_ms: z.object({ p50: z.number(), p95: z.number(), p99: z.number() }).nullable(),
  error_budget: z.object({ allowed_failures: z.number(), failures: z.number().int(), remaining: z.number() }),
  burn_rate: z.number(),
  availability_met: z.boolean().nullable(),
  latency_met: z.boolean().nullable(),
  met: z.boolean().nullable(),
  status: z.enum(['met', 'breached', 'no_data']),
});
type Report = z.output<typeof report>;

function objectiveOf(config: Config, domain: string) {
  return config.slo.domains[domain] ?? config.slo.default;
}

/** One domain's SLO over its window, from the recorded task outcomes (definitions: README "SLOs"). */
async function measure(services: Pick<Services, 'mesh' | 'config' | 'db'>, domain: string): Promise<Report> {
  const o = objectiveOf(services.config, domain);
  const until = new Date();
  const since = new Date(until.getTime() - o.windowSeconds * 1000);
  // Outcomes are written in batches: write what is buffered so that the latest tasks count.
  await services.mesh.outcomesWriter.flush();
  const filter = { kernelId: domain, since: since.toISOString() };
  const { tasks: total, failed } = await outcomeCounts(services.db, filter);
  const ok = total - failed;
  const budget = 1 - o.availability;
  const ratio = total ? ok / total : null;
  const ps = await outcomePercentiles(services.db, filter, 'duration_ms', [50, 95, 99], total);
  const latency = ps ? { p50: round(ps[0]!, 3), p95: round(ps[1]!, 3), p99: round(ps[2]!, 3) } : null;
  const allowed = budget * total;
  const availabilityMet = ratio === null ? null : ratio >= o.availability;
  const latencyMet = latency === null ? null : latency.p99 <= o.latencyP99Ms;
  const met = availabilityMet === null ? null : availabilityMet && !!latencyMet;
  return {
    domain,
    objective: { availability: o.availability, latency_p99_ms: o.latencyP99Ms, window_seconds: o.windowSeconds },
    window: { since: since.toISOString(), until: until.toISOString() },
    tasks: total,
    succeeded: ok,
    failed,
    success_ratio: ratio === null ? null : round(ratio),
    latency_ms: latency,
    error_budget: { allowed_failures: round(allowed), failures: failed, remaining: total ? round(1 - failed / allowed) : 1 },
    burn_rate: ratio === null ? 0 : round((1 - ratio) / budget),
    availability_met: availabilityMet,
    latency_met: latencyMet,
    met,
    status: met === null ? 'no_data' : met ? 'met' : 'breached',
  };
}

export default definePlugin({
  id: 'slo',
  prefix: '/ops',
  deps: { mesh: core.mesh, config: core.config, db: core.db },
  routes: (route) => [
    route({
      method: 'get',
      path: '/slo',
      summary: 'SLO status of every kernel domain over its configured window',
      access: 'viewer',
      response: z.object({
        timestamp: z.string(),
        met: z.boolean().nullable(),
        domains_met: z.number().int(),
        domains_breached: z.number().int(),
        domains_without_data: z.number().int(),
        domains: z.array(report),
      }),
      handler: async ({ services }) => {
        const domains = services.mesh.kernelIds();
        const reports: Report[] = [];
        for (const d of domains) reports.push(await measure(services, d));
        const count = (s: Report['status']) => reports.filter((r) => r.status === s).length;
        const withData = reports.filter((r) => r.met !== null);
        return {
          timestamp: new Date().toISOString(),
          met: withData.length ? withData.every((r) => r.met) : null,
          domains_met: count('met'),
          domains_breached: count('breached'),
          domains_without_data: count('no_data'),
          domains: reports,
        };
      },
    }),
    route({
      method: 'get',
      path: '/slo/{domain}',
      summary: 'SLO status of one domain: success ratio, latency percentiles, error budget remaining, burn rate',
      access: 'viewer',
      params: z.object({ domain: kernelId }),
      response: report,
      errors: [404],
      handler: ({ params, services }) => {
        services.mesh.kernelOf(params.domain);
        return measure(services, params.domain);
      },
    }),
  ],
});
