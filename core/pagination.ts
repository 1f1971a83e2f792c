import type { Knex } from 'knex';
import { decodeCursor, encodeCursor } from './actions';
import { invalid } from './errors';

/**
 * A newest-first keyset page on (created_at, id): the list convention of the API
 * (`{items, next_cursor}`); a malformed cursor is a 422 on `query.cursor`.
 */
export async function pageOf(q: Knex.QueryBuilder, limit: number, cursor?: string) {
  if (cursor) {
    let at: string, id: string;
    try {
      [at, id] = decodeCursor(cursor);
    } catch {
      throw invalid(['query', 'cursor'], 'malformed cursor');
    }
    q.where((w) => w.where('created_at', '<', at).orWhere((x) => x.where('created_at', at).andWhere('id', '<', id)));
  }
  const rows: Array<Record<string, any>> = await q.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit + 1);
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, next_cursor: rows.length > limit && last ? (encodeCursor(last.created_at, last.id) as string) : null };
}
