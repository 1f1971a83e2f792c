import { z } from 'zod';
import type { Services } from '../../core/services';

export const hostSchema = z.object({
  kernel_health: z.object({ status: z.string(), detail: z.record(z.string(), z.unknown()) }).nullable(),
  kernel_nodes: z.array(z.object({ kernel: z.string(), node: z.string(), state: z.string(), queue_depth: z.number(), in_flight: z.number() })),
  breakers: z.array(z.object({ kernel: z.string(), state: z.string() })),
  kernel_tasks: z.array(z.object({ kernel: z.string(), outcome: z.string(), count: z.number() })),
  http: z.object({ requests: z.number(), server_errors: z.number(), rate_limited: z.number() }),
});

type Point = { attributes: Record<string, unknown>; value: unknown };

/**
 * The host's own telemetry, read back from the OpenTelemetry meter (what /metrics/ shows):
 * kernel task counts, node and breaker states, HTTP figures since start, kernel health.
 */
export async function hostFigures(services: Pick<Services, 'db' | 'telemetry' | 'actions' | 'health'>): Promise<z.infer<typeof hostSchema>> {
  const rm = await services.telemetry.sdk.collect();
  const points = (name: string): Point[] =>
    rm.scopeMetrics.flatMap((s) => s.metrics.filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints as unknown as Point[]));
  const tasks = new Map<string, { kernel: string; outcome: string; count: number }>();
  for (const p of points('kernel.tasks')) {
    const kernel = String(p.attributes.kernel);
    const outcome = String(p.attributes.outcome);
    const t = tasks.get(`${kernel}|${outcome}`) ?? { kernel, outcome, count: 0 };
    t.count += Number(p.value);
    tasks.set(`${kernel}|${outcome}`, t);
  }
  let requests = 0;
  let serverErrors = 0;
  // The request-duration histogram counts every request by route and status.
  for (const p of points('http.server.request.duration')) {
    const count = Number((p.value as { count?: number }).count ?? 0);
    requests += count;
    if (Number(p.attributes['http.response.status_code']) >= 500) serverErrors += count;
  }
  const rateLimited = points('http.server.rate_limited').reduce((a, p) => a + Number(p.value), 0);
  const snapshot = services.telemetry.kernels.snapshot();
  return {
    kernel_health: await services.health.check('kernels'),
    kernel_nodes: snapshot.nodes.map((n) => ({ kernel: n.kernel, node: n.node, state: n.state, queue_depth: n.queueDepth, in_flight: n.inFlight })),
    breakers: snapshot.breakers,
    kernel_tasks: [...tasks.values()],
    http: { requests, server_errors: serverErrors, rate_limited: rateLimited },
  };
}
