import { z } from 'zod';
import { NotFound } from '../../core/errors';
import { overall } from '../../core/health';
import { definePlugin, route } from '../../core/plugin';

const state = z.enum(['healthy', 'degraded', 'unhealthy', 'unknown', 'disabled']);
const component = z.object({ status: state, detail: z.record(z.string(), z.unknown()) });

export default definePlugin({
  id: 'health',
  prefix: '/health',
  services: ['health'],
  routes: [
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
  ],
});
