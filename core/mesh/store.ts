import crypto from 'node:crypto';
import { isPostgres, type Db, type Migration } from '../db';
import type { Logger } from '../logger';
import type { Health } from './types';

export const meshMigrations: Migration[] = [
  {
    name: '003_mesh',
    async up(db) {
      // One row per finished task; SLO reports read it. tenant_id: the caller's tenant, if any.
      await db.schema.createTable('task_outcomes', (t) => {
        t.bigIncrements('seq').primary();
        t.string('kernel_id', 64).notNullable();
        t.string('node_id', 96).notNullable();
        t.string('task', 64).notNullable();
        t.boolean('ok').notNullable();
        t.double('duration_ms').notNullable();
        t.double('wait_ms').notNullable();
        t.text('error');
        t.string('tenant_id', 64);
        t.string('at', 32).notNullable();
        t.index(['kernel_id', 'at']);
      });
      // Health changes into and out of degraded/unhealthy, for /health/incidents/recent.
      await db.schema.createTable('health_incidents', (t) => {
        t.string('id', 36).primary();
        t.string('kernel_id', 64).notNullable();
        t.string('node_id', 96);
        t.string('health', 16).notNullable();
        t.string('previous', 16).notNullable();
        t.text('reason').notNullable();
        t.string('at', 32).notNullable();
        t.index(['at']);
      });
    },
  },
];

export interface Outcome {
  kernel_id: string;
  node_id: string;
  task: string;
  ok: boolean;
  duration_ms: number;
  wait_ms: number;
  error: string | null;
  tenant_id: string | null;
  at: string;
}

export interface HealthIncident {
  id: string;
  kernel_id: string;
  node_id: string | null;
  health: Health;
  previous: Health;
  reason: string;
  at: string;
}

const OUTCOME_COLUMNS: Array<keyof Outcome> = ['kernel_id', 'node_id', 'task', 'ok', 'duration_ms', 'wait_ms', 'error', 'tenant_id', 'at'];
const OUTCOME_TYPES: Record<keyof Outcome, string> = {
  kernel_id: 'text', node_id: 'text', task: 'text', ok: 'boolean', duration_ms: 'double precision', wait_ms: 'double precision', error: 'text', tenant_id: 'text', at: 'text',
};

/**
 * One statement that inserts a batch given as a single JSON text (an array of outcomes).
 * Binding nine values a row cost ~8 us of the main thread per task at a flush (knex's
 * binding pass, then the driver's); the JSON text costs under one, and the database
 * unpacks it (SQLite json_each, PostgreSQL json_to_recordset) off the main thread.
 */
function outcomeInsert(db: Db): string {
  const cols = OUTCOME_COLUMNS.join(', ');
  if (isPostgres(db)) {
    const types = OUTCOME_COLUMNS.map((c) => `${c} ${OUTCOME_TYPES[c]}`).join(', ');
    return `INSERT INTO task_outcomes (${cols}) SELECT ${cols} FROM json_to_recordset(?::json) AS x(${types})`;
  }
  const values = OUTCOME_COLUMNS.map((c) => `json_extract(value, '$.${c}')`).join(', ');
  return `INSERT INTO task_outcomes (${cols}) SELECT ${values} FROM json_each(?) ORDER BY key`;
}

/** Writes task outcomes in batches (one insert per flush) so that tasks never wait on the database. */
export class OutcomeWriter {
  private buffer: Outcome[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private readonly insertSql: string;
  /** Rows that could not be written (database down), counted for visibility. */
  dropped = 0;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly flushMs: number,
    private readonly batchSize: number,
  ) {
    this.insertSql = outcomeInsert(db);
  }

  add(o: Outcome): void {
    this.buffer.push(o);
    if (this.buffer.length >= this.batchSize) void this.flush();
    else if (!this.timer) this.timer = setTimeout(() => void this.flush(), this.flushMs);
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const rows = this.buffer;
    this.buffer = [];
    if (rows.length === 0) return this.flushing;
    this.flushing = this.flushing.then(async () => {
      try {
        await this.db.raw(this.insertSql, [JSON.stringify(rows)]);
      } catch (err) {
        this.dropped += rows.length;
        this.log.warn({ err: (err as Error).message, rows: rows.length }, 'task outcomes not written');
      }
    });
    return this.flushing;
  }

  async outcomes(kernelId: string, sinceIso: string): Promise<{ ok: number; failed: number; durations: number[] }> {
    await this.flush();
    const rows = await this.db('task_outcomes').where('kernel_id', kernelId).andWhere('at', '>=', sinceIso).select('ok', 'duration_ms');
    let ok = 0;
    const durations: number[] = [];
    for (const r of rows) {
      if (r.ok === true || r.ok === 1) ok++;
      durations.push(Number(r.duration_ms));
    }
    return { ok, failed: rows.length - ok, durations };
  }
}

export async function storeIncident(db: Db, i: Omit<HealthIncident, 'id'>): Promise<HealthIncident> {
  const row = { id: crypto.randomUUID(), ...i };
  await db('health_incidents').insert(row);
  return row;
}
