import crypto from 'node:crypto';
import { insertRows, type Db, type Migration } from '../db';
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

/** Writes task outcomes in batches (one insert per flush) so that tasks never wait on the database. */
export class OutcomeWriter {
  private buffer: Outcome[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  /** Rows that could not be written (database down), counted for visibility. */
  dropped = 0;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly flushMs: number,
    private readonly batchSize: number,
  ) {}

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
        await insertRows(this.db, 'task_outcomes', OUTCOME_COLUMNS, rows);
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
