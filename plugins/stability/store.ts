import crypto from 'node:crypto';
import type { Db, Migration } from '../../core/db';
import { NotFound } from '../../core/errors';
import type { EventBus } from '../../core/events';
import { jobColumns } from '../../core/migration-helpers';

import { JOB_STATES, type JobState } from '../../core/jobs';

export const RUN_STATES = JOB_STATES;
export type RunState = JobState;
export const RUN_KINDS = ['stress_test', 'benchmark', 'attack_simulation'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

// Every long operation of the group is a run: one table, its kind-specific definition and
// result as JSON. Stress tests and attack simulations belong to the caller's tenant;
// benchmark runs measure the platform and are platform-wide (tenant_id null).
export const stabilityMigrations: Migration[] = [
  {
    name: '001_stability',
    async up(db) {
      await db.schema.createTable('stability_runs', (t) => {
        t.string('id', 36).primary();
        t.string('kind', 32).notNullable();
        t.string('tenant_id', 64);
        jobColumns(t);
        t.text('definition').notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['kind', 'created_at']);
      });
      await db.schema.createTable('stress_scenarios', (t) => {
        t.string('id', 64).primary();
        t.string('name', 200).notNullable();
        t.text('description').notNullable();
        t.text('target').notNullable();
        t.integer('rate_per_second').notNullable();
        t.integer('duration_seconds').notNullable();
        t.integer('concurrency').notNullable();
      });
      // Results of hardening validations, observability snapshots, compliance-style checks of this group.
      await db.schema.createTable('stability_checks', (t) => {
        t.string('id', 36).primary();
        t.string('kind', 32).notNullable();
        t.text('result').notNullable();
        t.string('created_by', 128).notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['kind', 'created_at']);
      });
      // Isolation leaks, kept here while the platform has no security findings service.
      await db.schema.createTable('stability_findings', (t) => {
        t.string('id', 36).primary();
        t.string('severity', 16).notNullable();
        t.string('kind', 32).notNullable();
        t.string('run_id', 36).notNullable();
        t.text('title').notNullable();
        t.text('evidence').notNullable();
        t.string('created_at', 32).notNullable();
      });
    },
  },
];

export interface Run<D = Record<string, unknown>, R = Record<string, unknown>> {
  id: string;
  kind: RunKind;
  tenant_id: string | null;
  state: RunState;
  definition: D;
  result: R | null;
  error: string | null;
  created_by: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

function toRun(r: Record<string, any>): Run<any, any> {
  return { ...r, definition: JSON.parse(r.definition), result: r.result ? JSON.parse(r.result) : null } as Run;
}

/** Runs of the group: created queued, moved through their states, each change published on the bus. */
export class Runs {
  constructor(
    private readonly db: Db,
    private readonly events: EventBus,
  ) {}

  async create(kind: RunKind, tenantId: string | null, definition: unknown, createdBy: string): Promise<Run<any, any>> {
    const row = { id: crypto.randomUUID(), kind, tenant_id: tenantId, state: 'queued', definition: JSON.stringify(definition), result: null, error: null, created_by: createdBy, created_at: new Date().toISOString(), started_at: null, finished_at: null };
    await this.db('stability_runs').insert(row);
    const run = toRun(row);
    this.publish(run, null);
    return run;
  }

  async get(kind: RunKind, id: string, tenantId: string | null): Promise<Run<any, any>> {
    const q = this.db('stability_runs').where({ id, kind });
    q.where((w) => (tenantId === null ? w.whereNull('tenant_id') : w.where('tenant_id', tenantId)));
    const row = await q.first();
    if (!row) throw new NotFound(`${kind.replace('_', ' ')} ${id} not found`);
    return toRun(row);
  }

  async list(kind: RunKind, tenantId: string | null, limit: number, state?: RunState): Promise<Array<Run<any, any>>> {
    const q = this.db('stability_runs').where({ kind }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit);
    q.where((w) => (tenantId === null ? w.whereNull('tenant_id') : w.where('tenant_id', tenantId)));
    if (state) q.where('state', state);
    return (await q).map(toRun);
  }

  async move(run: Run<any, any>, state: RunState, patch: { result?: unknown; error?: string | null } = {}): Promise<Run<any, any>> {
    const now = new Date().toISOString();
    const row: Record<string, unknown> = { state };
    if (state === 'running') row.started_at = now;
    if (state === 'succeeded' || state === 'failed' || state === 'cancelled') row.finished_at = now;
    if (patch.result !== undefined) row.result = JSON.stringify(patch.result);
    if (patch.error !== undefined) row.error = patch.error;
    await this.db('stability_runs').where({ id: run.id }).update(row);
    const after = await this.get(run.kind, run.id, run.tenant_id);
    this.publish(after, run.state);
    return after;
  }

  private publish(run: Run<any, any>, previous: RunState | null): void {
    this.events.publish(run.kind, { id: run.id, tenant_id: run.tenant_id, state: run.state, previous, error: run.error });
  }
}
