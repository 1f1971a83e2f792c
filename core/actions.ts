import crypto from 'node:crypto';
import type { Db, Migration } from './db';
import type { EventBus } from './events';

/** One control action, manual or automated, as the actions history shows it. */
export interface ActionRecord {
  id: string;
  /** manual: a caller asked for it; automated: the platform did it (breaker, AKO, chaos, ...). */
  source: 'manual' | 'automated';
  /** User id, or the component that acted (e.g. `breaker`, `ako`, `chaos`). */
  actor: string;
  /** e.g. pause_node, drain_kernel, open_incident, isolate_kernel. */
  action: string;
  target_type: string;
  target_id: string;
  /** Why it was done (free text or the id of the cause, e.g. an incident). */
  cause: string | null;
  result: 'succeeded' | 'failed' | 'refused';
  detail: Record<string, unknown>;
  tenant_id: string | null;
  created_at: string;
}

export const actionMigrations: Migration[] = [
  {
    name: '002_actions',
    async up(db) {
      await db.schema.createTable('actions', (t) => {
        t.string('id', 36).primary();
        t.string('source', 16).notNullable();
        t.string('actor', 128).notNullable();
        t.string('action', 64).notNullable();
        t.string('target_type', 32).notNullable();
        t.string('target_id', 128).notNullable();
        t.text('cause');
        t.string('result', 16).notNullable();
        t.text('detail').notNullable();
        t.string('tenant_id', 64);
        t.string('created_at', 32).notNullable();
        t.index(['created_at']);
        t.index(['target_type', 'target_id']);
      });
    },
  },
];

export type NewAction = Omit<ActionRecord, 'id' | 'created_at' | 'detail' | 'cause' | 'tenant_id'> &
  Partial<Pick<ActionRecord, 'detail' | 'cause' | 'tenant_id'>>;

/** Records every control action and publishes it as an `action_taken` event. */
export class ActionLog {
  /** Last created_at given (ms): kept strictly increasing, so that newest-first is the order of recording. */
  private lastMs = 0;

  constructor(
    private readonly db: Db,
    private readonly events: EventBus,
  ) {}

  async record(a: NewAction): Promise<ActionRecord> {
    const row: ActionRecord = {
      id: crypto.randomUUID(),
      cause: null,
      tenant_id: null,
      detail: {},
      ...a,
      created_at: this.nextTimestamp(),
    };
    await this.db('actions').insert({ ...row, detail: JSON.stringify(row.detail) });
    this.events.publish('action_taken', { ...row });
    return row;
  }

  private nextTimestamp(): string {
    this.lastMs = Math.max(Date.now(), this.lastMs + 1);
    return new Date(this.lastMs).toISOString();
  }

  /** Newest first; `cursor` continues after the last row of the previous page (created_at|id of the last row seen). */
  async list(filter: {
    source?: string;
    action?: string;
    target_type?: string;
    target_id?: string;
    actor?: string;
    since?: string;
    until?: string;
    /** Only this tenant's actions and platform-wide ones (tenant_id null). */
    visibleTo?: string;
    limit: number;
    cursor?: string;
  }): Promise<{ actions: ActionRecord[]; next_cursor: string | null }> {
    const q = this.db('actions').orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]);
    for (const key of ['source', 'action', 'target_type', 'target_id', 'actor'] as const) {
      if (filter[key]) q.where(key, filter[key]);
    }
    if (filter.since) q.where('created_at', '>=', filter.since);
    if (filter.until) q.where('created_at', '<', filter.until);
    if (filter.visibleTo) q.where((w) => w.where('tenant_id', filter.visibleTo!).orWhereNull('tenant_id'));
    if (filter.cursor) {
      const [at, id] = decodeCursor(filter.cursor);
      q.where((w) => w.where('created_at', '<', at).orWhere((x) => x.where('created_at', at).andWhere('id', '<', id)));
    }
    const rows = await q.limit(filter.limit + 1);
    const page = rows.slice(0, filter.limit).map((r) => ({ ...r, detail: JSON.parse(r.detail) as Record<string, unknown> }));
    const last = page[page.length - 1];
    return { actions: page, next_cursor: rows.length > filter.limit && last ? encodeCursor(last.created_at, last.id) : null };
  }
}

export function encodeCursor(...parts: string[]): string {
  return Buffer.from(parts.join('|'), 'utf8').toString('base64url');
}

/** Decodes a cursor made by encodeCursor; a malformed one throws (callers answer 422). */
export function decodeCursor(cursor: string): string[] {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const parts = text.split('|');
  if (parts.length < 2 || parts.some((p) => !p)) throw new Error('malformed cursor');
  return parts;
}
