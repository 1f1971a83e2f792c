import crypto from 'node:crypto';
import { type Db, type Migration } from './db';
import { z } from 'zod';
import type { EventBus } from './events';
import { afterCursor, encodeCursor } from './pagination';

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

/** An action record as the API shows it (actions history, audit log). */
export const actionRecordSchema = z.object({
  id: z.string(),
  source: z.enum(['manual', 'automated']),
  actor: z.string(),
  action: z.string(),
  target_type: z.string(),
  target_id: z.string(),
  cause: z.string().nullable(),
  result: z.enum(['succeeded', 'failed', 'refused']),
  detail: z.record(z.string(), z.unknown()),
  tenant_id: z.string().nullable(),
  created_at: z.string(),
});

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
  /** Last created_at handed out: kept strictly increasing so that the history's order is the order of recording. */
  private last = 0;

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
      created_at: this.stamp(),
    };
    await this.db('actions').insert({ ...row, detail: JSON.stringify(row.detail) });
    this.events.publish('action_taken', { ...row });
    return row;
  }

  // Two actions in the same millisecond would otherwise tie and sort by their random ids.
  private stamp(): string {
    this.last = Math.max(Date.now(), this.last + 1);
    return new Date(this.last).toISOString();
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
    limit: number;
    cursor?: string;
    /** Tenant scope: that tenant's actions, plus platform-wide ones (tenant_id null) when `platform`. Unset: all. */
    scope?: { tenant_id: string; platform: boolean };
  }): Promise<{ actions: ActionRecord[]; next_cursor: string | null }> {
    const q = this.db('actions').orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]);
    for (const key of ['source', 'action', 'target_type', 'target_id', 'actor'] as const) {
      if (filter[key]) q.where(key, filter[key]);
    }
    if (filter.scope) {
      const { tenant_id, platform } = filter.scope;
      q.where((w) => (platform ? w.where('tenant_id', tenant_id).orWhereNull('tenant_id') : w.where('tenant_id', tenant_id)));
    }
    if (filter.since) q.where('created_at', '>=', filter.since);
    if (filter.until) q.where('created_at', '<', filter.until);
    afterCursor(q, filter.cursor);
    const rows = await q.limit(filter.limit + 1);
    const page = rows.slice(0, filter.limit).map((r) => ({ ...r, detail: JSON.parse(r.detail) as Record<string, unknown> }));
    const last = page[page.length - 1];
    return { actions: page, next_cursor: rows.length > filter.limit && last ? encodeCursor(last.created_at, last.id) : null };
  }
}
