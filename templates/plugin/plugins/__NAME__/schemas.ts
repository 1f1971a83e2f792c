// plugins/__NAME__/schemas.ts: the zod schemas of the routes; they validate requests and
// responses and make the OpenAPI document.
import { z } from 'zod';

export const entry = z.object({
  id: z.uuid(),
  title: z.string(),
  body: z.string(),
  created_by: z.string(),
  created_at: z.string(),
});
export type Entry = z.infer<typeof entry>;

export const newEntry = z.object({
  title: z.string().trim().min(1).max(200),
  body: z.string().max(10_000).default(''),
});

export const entryParams = z.object({ entry_id: z.uuid() });

export const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().max(200).optional(),
});

export const entriesPage = z.object({ entries: z.array(entry), next_cursor: z.string().nullable() });
