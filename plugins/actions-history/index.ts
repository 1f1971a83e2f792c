import { z } from 'zod';
import { invalid } from '../../core/errors';
import { actionRecordSchema, decodeCursor } from '../../core/actions';
import { definePlugin } from '../../core/plugin';
import { core } from '../../core/services';
import { roleAtLeast } from '../../core/roles';

const word = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'lowercase letters, digits and _');
const instant = z.iso.datetime({ offset: true }).transform((s) => new Date(s).toISOString());

const action = actionRecordSchema;

export default definePlugin({
  id: 'actions-history',
  prefix: '/ops/actions',
  deps: { actions: core.actions },
  routes: (route) => [
    route({
      method: 'get',
      path: '/history',
      summary: 'Every automated and manual control action, newest first, filtered and paged',
      description:
        "A caller sees its tenant's actions; operators and above also see platform-wide ones (mesh, breakers, automatic incidents).",
      access: 'viewer',
      query: z.object({
        source: z.enum(['manual', 'automated']).optional(),
        action: word.optional(),
        target_type: word.optional(),
        target: z.string().min(1).max(128).optional(),
        actor: z.string().min(1).max(128).optional(),
        since: instant.optional(),
        until: instant.optional(),
        limit: z.coerce.number().int().min(1).max(500).default(100),
        cursor: z.string().min(1).max(512).optional(),
      }),
      response: z.object({ actions: z.array(action), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: ({ query, caller, services }) => {
        if (query.cursor) {
          try {
            decodeCursor(query.cursor);
          } catch {
            throw invalid(['query', 'cursor'], 'malformed cursor');
          }
        }
        if (query.since && query.until && query.since >= query.until) throw invalid(['query', 'since'], 'since must be before until');
        const { target, ...rest } = query;
        return services.actions.list({
          ...rest,
          target_id: target,
          scope: { tenant_id: caller!.tenantId, platform: roleAtLeast(caller!.role, 'operator') },
        });
      },
    }),
  ],
});
