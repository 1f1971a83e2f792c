import { z } from 'zod';
import { invalid } from '../../core/errors';
import { definePlugin, provide } from '../../core/plugin';
import { core } from '../../core/services';
import { searchIndexRef } from '../../core/contracts/search';
import { searchMigrations, SqlSearchIndex } from './store';

const typeName = z.string().regex(/^[a-z][a-z0-9_]{0,39}$/);

const searchQuery = z.object({
  q: z.string().trim().min(1).max(200).describe('Words to find; every word must match, the last one as a prefix'),
  types: z.string().max(400).optional().describe('Comma-separated object types, e.g. incident,workflow'),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().regex(/^\d{1,6}$/, 'a cursor from next_cursor').optional(),
});

const hit = z.object({
  type: z.string(),
  id: z.string(),
  tenant_id: z.string().nullable(),
  title: z.string(),
  url: z.string().nullable(),
  updated_at: z.string(),
  score: z.number(),
  highlights: z.object({ title: z.string(), body: z.string() }),
});

export default definePlugin({
  id: 'search',
  prefix: '',
  deps: { index: searchIndexRef },
  provides: [
    provide(searchIndexRef, {
      deps: { db: core.db, events: core.events, mesh: core.mesh, log: core.log },
      factory: ({ db, events, mesh, log }) => new SqlSearchIndex(db, { events, mesh, log }),
      start: (s) => (s as SqlSearchIndex).start(),
      stop: (s) => (s as SqlSearchIndex).stop(),
    }),
  ],
  migrations: searchMigrations,
  routes: (route) => [
    route({
      method: 'get',
      path: '/search/',
      summary: "Full-text search over the caller's tenant's objects and the platform's kernels and nodes, best match first",
      access: 'viewer',
      query: searchQuery,
      response: z.object({ q: z.string(), engine: z.string(), total: z.number().int(), results: z.array(hit), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const types = query.types?.split(',').map((t) => t.trim()).filter(Boolean);
        types?.forEach((t, i) => {
          if (!typeName.safeParse(t).success) throw invalid(['query', 'types', i], `"${t}" is not a type name`);
        });
        const { index } = services;
        const offset = Number(query.cursor ?? 0);
        const { hits, total } = await index.search({ q: query.q, tenantId: caller!.tenantId, types, limit: query.limit, offset });
        const next = offset + hits.length < total ? String(offset + hits.length) : null;
        return { q: query.q, engine: index.engine, total, results: hits, next_cursor: next };
      },
    }),
  ],
});
