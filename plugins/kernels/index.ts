import { z } from 'zod';
import { Cancel } from '../../core/mesh/cancel';
import { forwardTask, relay } from './forward';
import { kernelId, kernelView, meshStats } from '../../core/mesh/schemas';
import { pageInMemory } from '../../core/pagination';
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
        const page = pageInMemory(services.mesh.kernels(), (k) => k.id, query.limit, query.cursor);
        return { kernels: page.items, next_cursor: page.next_cursor };
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
      handler: async ({ params, services }) => {
        const view = services.mesh.kernel(params.domain);
        const stats = (await services.mesh.clusterStats()).kernels.find((k) => k.kernel_id === params.domain)!;
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
      description: '200 with the output; 422 for bad input; 503 with the reason when the kernel cannot take work (no eligible node within mesh.noNodeWaitMs, breaker open, a dependency not configured); 502 when the task itself fails (an internal fault answers only with the request id; a task\'s own error with its message and status). In a cluster, a host without an active node of the kernel forwards the task to the least-loaded host that has one and relays its answer (header X-Served-By names that host); 504 PEER_TIMEOUT or 503 PEER_UNREACHABLE when that host does not answer.',
      access: 'member',
      params: z.object({ domain: kernelId, task: z.string().regex(/^[a-z][a-z0-9_]*$/).max(64) }),
      body: z.unknown(),
      response: z.object({ domain: z.string(), task: z.string(), output: z.unknown(), duration_ms: z.number() }),
      errors: [404, 422, 502, 503, 504],
      handler: async ({ params, body, caller, services, req, res }) => {
        // In a cluster, a host with no active node of the kernel sends the task to one that has.
        const peer = services.mesh.forwarder?.fromPeer(req) ? null : services.mesh.forwardTarget(params.domain);
        if (peer) return relay(await forwardTask(services.mesh.forwarder!, peer, req, body, String(res.getHeader('X-Request-Id'))), res);
        // A caller that goes away cancels its task.
        const gone = new Cancel();
        res.on('close', () => {
          if (!res.writableFinished) gone.abort(new Error('the client closed the connection'));
        });
        const t0 = performance.now();
        const output = await services.mesh.run(params.domain, params.task, body, { signal: gone, caller, requestId: String(res.getHeader('X-Request-Id')) });
        return { domain: params.domain, task: params.task, output, duration_ms: Math.round((performance.now() - t0) * 1000) / 1000 };
      },
    }),
  ],
});
