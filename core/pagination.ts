import type { Knex } from 'knex';
import { z } from 'zod';
import { invalid } from './errors';

// Cursors are opaque to clients: base64url of the sort key of the last item seen. This file
// is the one place that reads them, so a malformed cursor is answered the same way (422 on
// `query.cursor`) by every list.

/** The `limit` and `cursor` query fields of a list (default 100, at most 500). */
export const pageQuery = {
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().min(1).max(512).optional(),
};

export function encodeCursor(...parts: string[]): string {
  return Buffer.from(parts.join('|'), 'utf8').toString('base64url');
}

/** The parts of a cursor made by encodeCursor; a malformed one is a 422 on `query.cursor`. */
export function decodeCursor(cursor: string): [string, string, ...string[]] {
  const parts = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (parts.length < 2 || parts.some((p) => !p)) throw invalid(['query', 'cursor'], 'malformed cursor');
  return parts as [string, string, ...string[]];
}

/**
 * Keeps the rows after a `(column, id)` cursor in a query ordered by column then id
 * (descending by default; `asc` for oldest-first lists). No cursor: nothing is added.
 */
export function afterCursor(q: Knex.QueryBuilder, cursor: string | undefined, column = 'created_at', order: 'asc' | 'desc' = 'desc'): void {
  if (!cursor) return;
  const [at, id] = decodeCursor(cursor);
  const op = order === 'desc' ? '<' : '>';
  q.where((w) => w.where(column, op, at).orWhere((x) => x.where(column, at).andWhere('id', op, id)));
}

/**
 * A newest-first keyset page on (created_at, id): the list convention of the API
 * (`{items, next_cursor}`).
 */
export async function pageOf(q: Knex.QueryBuilder, limit: number, cursor?: string) {
  afterCursor(q, cursor);
  const rows: Array<Record<string, any>> = await q.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit + 1);
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, next_cursor: rows.length > limit && last ? encodeCursor(String(last.created_at), String(last.id)) : null };
}

/**
 * A page of a list held in memory (kernels, nodes), ordered by `key` ascending; the cursor
 * holds the key of the last item seen.
 */
export function pageInMemory<T>(items: T[], key: (item: T) => string, limit: number, cursor?: string): { items: T[]; next_cursor: string | null } {
  const sorted = [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const after = cursor ? decodeCursor(cursor)[1] : undefined;
  const rest = after === undefined ? sorted : sorted.filter((item) => key(item) > after);
  const page = rest.slice(0, limit);
  return { items: page, next_cursor: rest.length > limit ? encodeCursor('after', key(page[page.length - 1])) : null };
}

/** A page of a list held in memory in its own order (newest first, say); the cursor holds the offset. */
export function pageAtOffset<T>(items: T[], limit: number, cursor?: string): { items: T[]; next_cursor: string | null } {
  const start = cursor ? Number(decodeCursor(cursor)[1]) : 0;
  if (!Number.isInteger(start) || start < 0) throw invalid(['query', 'cursor'], 'malformed cursor');
  const end = start + limit;
  return { items: items.slice(start, end), next_cursor: end < items.length ? encodeCursor('offset', String(end)) : null };
}
