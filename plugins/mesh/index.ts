import { z } from 'zod';
import { breakerState, drainBody, drainStatus, health, kernelId, meshStats, nodeId, nodeView, nodeViewState } from '../../core/mesh/schemas';
import type { ActionActor } from '../../core/mesh/types';
import { pageInMemory } from '../../core/pagination';
import { addNodeOn } from '../../core/cluster/kernel-actions';
import { definePlugin } from '../../core/plugin';
import { core } from '../../core/services';
import { onOwner } from './owner';
import type { Caller } from '../../core/roles';

const params = z.object({ node_id: nodeId });
const actor = (c: Caller | null): ActionActor => ({ source: 'manual', actor: c?.id ?? 'unknown' });

export default definePlugin({
  id: 'mesh',
  prefix: '/mesh',
  deps: { mesh: core.mesh },
  routes: (route) => [
    route({
      method: 'get',
      path: '/health',
      summary: 'Mesh health: global state, each kernel and each node with the reason',
      access: 'viewer',
      response: z.object({
        status: health,
        reason: z.string(),
        timestamp: z.string(),
        kernels: z.array(z.object({ kernel_id: z.string(), health, reason: z.string(), breaker: z.string() })),
        nodes: z.array(z.object({ node_id: z.string(), kernel_id: z.string(), state: nodeViewState, health, reason: z.string() })),
      }),
      handler: ({ services }) => {
        const kernels = services.mesh.kernels();
        const g = services.mesh.globalHealth;
        return {
          status: g.health,
          reason: g.reason,
          timestamp: new Date().toISOString(),
          kernels: kernels.map((k) => ({ kernel_id: k.id, health: k.health, reason: k.reason, breaker: k.breaker.state })),
          nodes: kernels.flatMap((k) => k.nodes.map((n) => ({ node_id: n.id, kernel_id: k.id, state: n.state, health: n.health, reason: n.reason }))),
        };
      },
    }),
    route({
      method: 'get',
      path: '/nodes',
      summary: 'List nodes, filtered by kernel, state or health',
      access: 'viewer',
      query: z.object({
        kernel_id: kernelId.optional(),
        state: nodeViewState.optional(),
        health: health.optional(),
        limit: z.coerce.number().int().min(1).max(500).default(100),
        cursor: z.string().max(200).optional(),
      }),
      response: z.object({ nodes: z.array(nodeView), next_cursor: z.string().nullable() }),
      handler: ({ query, services }) => {
        const all = services.mesh.nodes().filter((n) => (!query.kernel_id || n.kernel_id === query.kernel_id) && (!query.state || n.state === query.state) && (!query.health || n.health === query.health));
        // Node ids sort by kernel, then number.
        const key = (n: { id: string }) => n.id.replace(/-(\d+)$/, (_, i: string) => `-${i.padStart(6, '0')}`);
        const page = pageInMemory(all, key, query.limit, query.cursor);
        return { nodes: page.items, next_cursor: page.next_cursor };
      },
    }),
    route({
      method: 'get',
      path: '/nodes/{node_id}',
      summary: 'One node: state, health with reason, live threads with their last heartbeat, counters',
      access: 'viewer',
      params,
      response: nodeView,
      errors: [404],
      handler: ({ params, services }) => services.mesh.node(params.node_id),
    }),
    route({
      method: 'post',
      path: '/nodes/{node_id}/pause',
      summary: 'Pause a node: no new tasks; tasks in flight go on (409 unless active)',
      access: 'operator',
      params,
      response: nodeView,
      errors: [404, 409, 504],
      handler: ({ params, caller, services }) => onOwner(services.mesh, params.node_id, 'pause', { actor: actor(caller) }, () => services.mesh.pauseNode(params.node_id, actor(caller))),
    }),
    route({
      method: 'post',
      path: '/nodes/{node_id}/resume',
      summary: 'Resume a paused or drained node (a drained node gets fresh threads)',
      access: 'operator',
      params,
      response: nodeView,
      errors: [404, 409, 504],
      handler: ({ params, caller, services }) => onOwner(services.mesh, params.node_id, 'resume', { actor: actor(caller) }, () => services.mesh.resumeNode(params.node_id, actor(caller))),
    }),
    route({
      method: 'post',
      path: '/nodes/{node_id}/drain',
      summary: 'Start draining a node: no new tasks; in-flight tasks finish; poll drain/status',
      description: 'deadline_seconds (default mesh.drainDeadlineSeconds): at the deadline the drain completes if nothing is in flight, aborts what is left when force is true, or else completes as soon as the last task finishes.',
      access: 'operator',
      params,
      body: drainBody,
      status: 202,
      response: drainStatus,
      errors: [404, 409, 504],
      handler: ({ params, body, caller, services }) => onOwner(services.mesh, params.node_id, 'drain', { actor: actor(caller), opts: body }, () => services.mesh.drainNode(params.node_id, body, actor(caller))),
    }),
    route({
      method: 'post',
      path: '/nodes/{node_id}/drain/complete',
      summary: 'Complete a drain: terminates the node\'s threads (409 while tasks are in flight unless force, which aborts them)',
      access: 'operator',
      params,
      body: z.object({ force: z.boolean().default(false) }).strict(),
      response: nodeView,
      errors: [404, 409, 504],
      handler: ({ params, body, caller, services }) => onOwner(services.mesh, params.node_id, 'drain_complete', { actor: actor(caller), opts: body }, () => services.mesh.completeDrain(params.node_id, body, actor(caller))),
    }),
    route({
      method: 'post',
      path: '/nodes/{node_id}/drain/abort',
      summary: 'Abort a drain: the node returns to active',
      access: 'operator',
      params,
      response: nodeView,
      errors: [404, 409, 504],
      handler: ({ params, caller, services }) => onOwner(services.mesh, params.node_id, 'drain_abort', { actor: actor(caller) }, () => services.mesh.abortDrain(params.node_id, actor(caller))),
    }),
    route({
      method: 'get',
      path: '/nodes/{node_id}/drain/status',
      summary: 'Drain status: state, started_at, deadline, in flight, completed since the start, progress',
      access: 'viewer',
      params,
      response: drainStatus,
      errors: [404, 409, 504],
      handler: ({ params, services }) => onOwner(services.mesh, params.node_id, 'drain_status', {}, () => services.mesh.drainStatus(params.node_id)),
    }),
    route({
      method: 'post',
      path: '/nodes',
      summary: 'Add a node to a kernel (a new pool; ids continue the kernel\'s numbering)',
      description: 'In a cluster, `host` names the host that runs the new node (default: the host that gets the call); 404 for an unknown host, 409 HOST_LOST for one that stopped heartbeating, 504 OWNER_TIMEOUT when it does not answer.',
      access: 'operator',
      body: z.object({ kernel_id: kernelId, threads: z.number().int().min(1).max(64).optional(), host: z.string().regex(/^[a-z][a-z0-9]{0,15}$/).optional().describe('The cluster host to run the node on') }).strict(),
      status: 201,
      response: nodeView,
      errors: [404, 409, 504],
      handler: ({ body, caller, services }) => addNodeOn(services.mesh, body.host, body.kernel_id, actor(caller), body.threads),
    }),
    route({
      method: 'delete',
      path: '/nodes/{node_id}',
      summary: 'Remove a drained node (409 otherwise)',
      access: 'operator',
      params,
      status: 204,
      errors: [404, 409, 504],
      handler: async ({ params, caller, services }) => {
        await onOwner(services.mesh, params.node_id, 'remove', { actor: actor(caller) }, () => services.mesh.removeNode(params.node_id, actor(caller)));
      },
    }),
    route({
      method: 'put',
      path: '/nodes/{node_id}/threads',
      summary: 'Set a node\'s thread count: a running node gets a new pool at once; the old one finishes its tasks',
      access: 'operator',
      params,
      body: z.object({ threads: z.number().int().min(1).max(64) }).strict(),
      response: nodeView,
      errors: [404, 409, 504],
      handler: ({ params, body, caller, services }) => onOwner(services.mesh, params.node_id, 'threads', { actor: actor(caller), threads: body.threads }, () => services.mesh.setThreads(params.node_id, body.threads, actor(caller))),
    }),
    route({
      method: 'get',
      path: '/stats',
      summary: 'Task counters and run/wait time percentiles per kernel and node',
      access: 'viewer',
      response: meshStats,
      handler: ({ services }) => services.mesh.clusterStats(),
    }),
    route({
      method: 'get',
      path: '/hosts',
      summary: 'The hosts of the cluster: address, last heartbeat, whether their lease is live, node count, circuit breakers',
      description: 'On a single host, this host alone (host_id null). A host whose lease ran out stays listed with live false until it comes back or stops cleanly (docs/scale-out.md).',
      access: 'viewer',
      response: z.object({
        hosts: z.array(z.object({
          host_id: z.string().nullable(), url: z.string().nullable(), started_at: z.string(), heartbeat_at: z.string(), live: z.boolean(), nodes: z.number().int(), this_host: z.boolean(),
          breakers: z.record(z.string(), z.object({ state: breakerState, isolated: z.boolean() })).describe("Each kernel's circuit breaker on that host, as of its last heartbeat (breakers are per host)"),
        })),
      }),
      handler: ({ services }) => ({ hosts: services.mesh.hosts() }),
    }),
  ],
});
