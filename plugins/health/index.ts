import { z } from 'zod';
import { decodeCursor, encodeCursor } from '../../core/actions';
import { invalid, NotFound } from '../../core/errors';
import { overall } from '../../core/health';
import { health as meshHealth, incident, kernelId } from '../../core/mesh/schemas';
import { definePlugin } from '../../core/plugin';
import { core } from '../../core/services';

const state = z.enum(['healthy', 'degraded', 'unhealthy', 'unknown', 'disabled']);
const component = z.object({ status: state, detail: z.record(z.string(), z.unknown()) });

export default definePlugin({
  id: 'health',
  prefix: '/health',
  deps: { health: core.health, mesh: core.mesh },
  routes: (route) => [
    route({
      method: 'get',
      path: '/',
      summary: 'Overall health: every component, measured now',
      access: 'public',
      response: z.object({
        status: z.enum(['healthy', 'degraded']),
        timestamp: z.string(),
        components: z.record(z.string(), state),
        details: z.record(z.string(), component),
      }),
      handler: async ({ services }) => {
        const details = await services.health.checkAll();
        return {
          status: overall(details),
          timestamp: new Date().toISOString(),
          components: Object.fromEntries(Object.entries(details).map(([k, v]) => [k, v.status])),
          details,
        };
      },
    }),
    route({
      method: 'get',
      path: '/component/{component_id}',
      summary: 'One component with its detail',
      access: 'public',
      params: z.object({ component_id: z.string().min(1).max(64) }),
      response: component.extend({ component: z.string(), timestamp: z.string() }),
      errors: [404],
      handler: async ({ params, services }) => {
        const result = await services.health.check(params.component_id);
        if (!result) {
          throw new NotFound(`Unknown component "${params.component_id}"; known: ${services.health.names().join(', ')}`);
        }
        return { component: params.component_id, timestamp: new Date().toISOString(), ...result };
      },
    }),
    route({
      method: 'get',
      path: '/domain/{domain}',
      summary: 'Health of one domain (kernel): derived from its nodes, each with the reason',
      access: 'public',
      params: z.object({ domain: kernelId }),
      response: z.object({
        domain: z.string(),
        status: meshHealth,
        reason: z.string(),
        timestamp: z.string(),
        breaker: z.string(),
        nodes: z.array(z.object({ node_id: z.string(), state: z.string(), health: meshHealth, reason: z.string() })),
      }),
      errors: [404],
      handler: ({ params, services }) => {
        const k = services.mesh.kernel(params.domain);
        return {
          domain: k.domain,
          status: k.health,
          reason: k.reason,
          timestamp: new Date().toISOString(),
          breaker: k.breaker.state,
          nodes: k.nodes.map((n) => ({ node_id: n.id, state: n.state, health: n.health, reason: n.reason })),
        };
      },
    }),
    route({
      method: 'get',
      path: '/incidents/recent',
      summary: 'Recent health changes of kernels and nodes into and out of degraded or unhealthy, newest first',
      access: 'viewer',
      query: z.object({ domain: kernelId.optional(), limit: z.coerce.number().int().min(1).max(500).default(100), since: z.iso.datetime().optional(), cursor: z.string().max(200).optional() }),
      response: z.object({ incidents: z.array(incident), next_cursor: z.string().nullable() }),
      handler: async ({ query, services }) => {
        if (query.domain) services.mesh.kernel(query.domain);
        let after: [string, string] | undefined;
        if (query.cursor) {
          try {
            const [at, id] = decodeCursor(query.cursor);
            after = [at!, id!];
          } catch {
            throw invalid(['query', 'cursor'], 'malformed cursor');
          }
        }
        const rows = await services.mesh.incidents({ kernelId: query.domain, limit: query.limit + 1, since: query.since, after });
        const page = rows.slice(0, query.limit);
        const last = page[page.length - 1];
        return { incidents: page, next_cursor: rows.length > query.limit && last ? encodeCursor(last.at, last.id) : null };
      },
    }),
  ],
});
