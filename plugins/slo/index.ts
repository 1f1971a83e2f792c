import { z } from 'zod';
import type { Config } from '../../core/config';
import { kernelId } from '../../core/mesh/schemas';
import { definePlugin, route } from '../../core/plugin';
import type { Services } from '../../core/services';

const round = (x: number, digits = 6) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

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
async function measure(services: Services, domain: string): Promise<Report> {
  const o = objectiveOf(services.config, domain);
  const until = new Date();
  const since = new Date(until.getTime() - o.windowSeconds * 1000);
  const { ok, failed, durations } = await services.mesh.outcomes(domain, since.toISOString());
  const total = ok + failed;
  const budget = 1 - o.availability;
  const ratio = total ? ok / total : null;
  const sorted = durations.sort((a, b) => a - b);
  const latency = total ? { p50: round(percentile(sorted, 50), 3), p95: round(percentile(sorted, 95), 3), p99: round(percentile(sorted, 99), 3) } : null;
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
  services: ['mesh', 'config'],
  routes: [
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
        const domains = [...services.mesh.kernelMap.keys()].sort();
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
