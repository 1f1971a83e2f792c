import { z } from 'zod';
import { decodeCursor, encodeCursor } from '../../core/actions';
import { invalid } from '../../core/errors';
import { Cancel } from '../../core/mesh/cancel';
import { kernelId, kernelView, meshStats } from '../../core/mesh/schemas';
import { definePlugin } from '../../core/plugin';
import { core } from '../../core/services';

const domainParams = z.object({ domain: kernelId });

export default definePlugin({
  id: 'kernels',
  prefix: '/kernels',
  deps: { mesh: core.mesh },
  routes: (route) => [
    route({
      method: 'get',
      path: '/',
      summary: 'List kernel domains with their state, health, breaker and nodes',
      access: 'viewer',
      query: z.object({ limit: z.coerce.number().int().min(1).max(500).default(100), cursor: z.string().max(200).optional() }),
      response: z.object({ kernels: z.array(kernelView), next_cursor: z.string().nullable() }),
      handler: ({ query, services }) => {
        let all = services.mesh.kernels().sort((a, b) => a.id.localeCompare(b.id));
        if (query.cursor) {
          let after: string;
          try {
            after = decodeCursor(query.cursor)[1]!;
          } catch {
            throw invalid(['query', 'cursor'], 'malformed cursor');
          }
          all = all.filter((k) => k.id > after);
        }
        const page = all.slice(0, query.limit);
        return { kernels: page, next_cursor: all.length > query.limit ? encodeCursor('kernel', page[page.length - 1]!.id) : null };
      },
    }),
    route({
      method: 'get',
      path: '/{domain}/status',
      summary: 'Detailed status of one kernel: nodes, health with reasons, breaker, counters and timings',
      access: 'viewer',
      params: domainParams,
      response: kernelView.extend({ stats: meshStats.shape.kernels.element }),
      errors: [404],
      handler: ({ params, services }) => {
        const view = services.mesh.kernel(params.domain);
        const stats = services.mesh.stats().kernels.find((k) => k.kernel_id === params.domain)!;
        return { ...view, stats };
      },
    }),
    route({
      method: 'get',
      path: '/{domain}/ping',
      summary: 'Availability check: a real round trip to one of the kernel\'s worker threads',
      access: 'viewer',
      params: domainParams,
      response: z.object({
        status: z.enum(['ok', 'unavailable']),
        domain: z.string(),
        kernel_id: z.string(),
        health: z.string(),
        registered: z.boolean(),
        latency_ms: z.number().nullable(),
        node_id: z.string().nullable(),
        thread_id: z.number().int().nullable(),
        reason: z.string(),
        timestamp: z.string(),
      }),
      errors: [404],
      handler: async ({ params, services }) => {
        const k = services.mesh.kernel(params.domain);
        const p = await services.mesh.ping(params.domain);
        return { status: p.ok ? ('ok' as const) : ('unavailable' as const), domain: k.domain, kernel_id: k.id, health: k.health, registered: true, latency_ms: p.latency_ms, node_id: p.node_id, thread_id: p.thread_id, reason: p.reason, timestamp: new Date().toISOString() };
      },
    }),
    route({
      method: 'get',
      path: '/{domain}/tasks',
      summary: 'The task catalogue of a kernel, with the JSON schemas of each task\'s input and output',
      access: 'viewer',
      params: domainParams,
      response: z.object({ domain: z.string(), tasks: z.array(z.object({ name: z.string(), summary: z.string(), input_schema: z.unknown(), output_schema: z.unknown() })) }),
      errors: [404],
      handler: ({ params, services }) => ({ domain: params.domain, tasks: services.mesh.catalogue(params.domain) }),
    }),
    route({
      method: 'post',
      path: '/{domain}/tasks/{task}',
      summary: 'Runs a task on the least busy eligible node; the body is the task input',
      description: '200 with the output; 422 for bad input; 503 with the reason when the kernel cannot take work (no eligible node within mesh.noNodeWaitMs, breaker open, a dependency not configured); 502 when the task itself fails.',
      access: 'member',
      params: z.object({ domain: kernelId, task: z.string().regex(/^[a-z][a-z0-9_]*$/).max(64) }),
      body: z.unknown(),
      response: z.object({ domain: z.string(), task: z.string(), output: z.unknown(), duration_ms: z.number() }),
      errors: [404, 422, 502, 503],
      handler: async ({ params, body, caller, services, res }) => {
        // A caller that goes away cancels its task.
        const gone = new Cancel();
        res.on('close', () => {
          if (!res.writableFinished) gone.abort(new Error('the client closed the connection'));
        });
        const t0 = performance.now();
        const output = await services.mesh.run(params.domain, params.task, body, { signal: gone, caller });
        return { domain: params.domain, task: params.task, output, duration_ms: Math.round((performance.now() - t0) * 1000) / 1000 };
      },
    }),
  ],
});
