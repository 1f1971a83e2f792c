import { z } from 'zod';
import { drainBody, kernelActionResult, kernelId, kernelView, meshStats, overview } from '../../core/mesh/schemas';
import type { ActionActor } from '../../core/mesh/types';
import { kernelEverywhere } from '../../core/cluster/kernel-actions';
import { definePlugin } from '../../core/plugin';
import { core } from '../../core/services';
import type { Caller } from '../../core/roles';

const params = z.object({ kernel_id: kernelId });
const actor = (c: Caller | null): ActionActor => ({ source: 'manual', actor: c?.id ?? 'unknown' });

/** The mesh part of the operations console (/ops) and its live stream. */
export default definePlugin({
  id: 'ops-mesh',
  prefix: '/ops',
  deps: { mesh: core.mesh, hub: core.hub },
  routes: (route) => [
    route({
      method: 'get',
      path: '/mesh/overview',
      summary: 'Mesh state: registry, health, circuit breakers',
      access: 'viewer',
      response: overview,
      handler: ({ services }) => services.mesh.overview(),
    }),
    route({
      method: 'get',
      path: '/kernels',
      summary: 'List registered kernels',
      access: 'viewer',
      response: z.object({ kernels: z.array(kernelView), next_cursor: z.null() }),
      handler: ({ services }) => ({ kernels: services.mesh.kernels(), next_cursor: null }),
    }),
    route({
      method: 'get',
      path: '/kernels/{kernel_id}',
      summary: 'Kernel details',
      access: 'viewer',
      params,
      response: kernelView,
      errors: [404],
      handler: ({ params, services }) => services.mesh.kernel(params.kernel_id),
    }),
    route({
      method: 'post',
      path: '/kernels/{kernel_id}/pause',
      summary: 'Pause every active node of a kernel (409 when none is active)',
      access: 'operator',
      params,
      response: kernelActionResult,
      errors: [404, 409, 504],
      handler: ({ params, caller, services }) => kernelEverywhere(services.mesh, 'pause', params.kernel_id, {}, actor(caller)),
    }),
    route({
      method: 'post',
      path: '/kernels/{kernel_id}/resume',
      summary: 'Resume every paused or drained node of a kernel (409 when none is)',
      access: 'operator',
      params,
      response: kernelActionResult,
      errors: [404, 409, 504],
      handler: ({ params, caller, services }) => kernelEverywhere(services.mesh, 'resume', params.kernel_id, {}, actor(caller)),
    }),
    route({
      method: 'post',
      path: '/kernels/{kernel_id}/drain',
      summary: 'Start draining every active or paused node of a kernel (409 when none can drain)',
      access: 'operator',
      params,
      body: drainBody,
      status: 202,
      response: kernelActionResult,
      errors: [404, 409, 504],
      handler: ({ params, body, caller, services }) => kernelEverywhere(services.mesh, 'drain', params.kernel_id, body, actor(caller)),
    }),
    route({
      method: 'post',
      path: '/kernels/{kernel_id}/isolate',
      summary: 'Isolate a kernel: open its circuit breaker by hand until restored (409 if already isolated)',
      access: 'operator',
      params,
      response: kernelView,
      errors: [404, 409, 504],
      handler: ({ params, caller, services }) => kernelEverywhere(services.mesh, 'isolate', params.kernel_id, {}, actor(caller)),
    }),
    route({
      method: 'post',
      path: '/kernels/{kernel_id}/restore',
      summary: 'Restore an isolated kernel: close its circuit breaker (409 if it is not open)',
      access: 'operator',
      params,
      response: kernelView,
      errors: [404, 409, 504],
      handler: ({ params, caller, services }) => kernelEverywhere(services.mesh, 'restore', params.kernel_id, {}, actor(caller)),
    }),
    route({
      method: 'get',
      path: '/stats',
      summary: 'Operations statistics: task counters and timings per kernel and node, stream clients',
      access: 'viewer',
      response: z.object({
        timestamp: z.string(),
        mesh: meshStats,
        stream: z.object({ clients: z.number().int(), events_sent: z.number().int(), dropped_slow: z.number().int(), dropped_unresponsive: z.number().int() }),
        outcomes_not_written: z.number().int(),
      }),
      handler: async ({ services }) => ({
        timestamp: new Date().toISOString(),
        mesh: await services.mesh.clusterStats(),
        stream: { clients: services.hub.clients.size, events_sent: services.hub.sent, dropped_slow: services.hub.dropped.slow, dropped_unresponsive: services.hub.dropped.unresponsive },
        outcomes_not_written: services.mesh.outcomesWriter.dropped,
      }),
    }),
  ],
  sockets: [
    {
      path: '/stream',
      summary: 'Live stream: a snapshot, then {type, timestamp, data} events; send {"type":"subscribe","types":[...]} to filter',
      access: 'viewer',
      onConnection: (ws, { caller, services }) => services.hub.accept(ws, caller),
    },
  ],
});
