import type { Migration } from '../../core/db';
import type { WorkflowStep } from '../../core/contracts/workflows';

export const EXEC_STATES = ['pending', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type ExecState = (typeof EXEC_STATES)[number];
export const FINISHED: ExecState[] = ['succeeded', 'failed', 'cancelled'];
export const STEP_STATES = ['pending', 'running', 'succeeded', 'failed', 'cancelled', 'skipped'] as const;
export type StepState = (typeof STEP_STATES)[number];

export type StepDef = WorkflowStep;

export interface Definition {
  id: string;
  tenant_id: string;
  name: string;
  steps: StepDef[];
  created_by: string;
  created_at: string;
}

export interface StepRun {
  id: string;
  kernel: string;
  task: string;
  state: StepState;
  attempts: number;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  output: unknown;
  error: string | null;
}

export interface Execution {
  id: string;
  tenant_id: string;
  workflow_id: string;
  workflow_name: string;
  state: ExecState;
  error: string | null;
  steps: StepRun[];
  created_by: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** Who chose other steps for this run (a router such as a canary: `canary:<variant id>:<arm>`), or null. */
  route: string | null;
}

export const workflowMigrations: Migration[] = [
  {
    name: '001_workflows',
    async up(db) {
      await db.schema.createTable('workflow_definitions', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('name', 200).notNullable();
        t.text('steps').notNullable();
        t.string('created_by', 128).notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['tenant_id', 'created_at']);
      });
      await db.schema.createTable('workflow_executions', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('workflow_id', 36).notNullable();
        t.string('workflow_name', 200).notNullable();
        t.string('state', 16).notNullable();
        t.text('error');
        // Per-step runs as JSON: they are always read and written with their execution.
        t.text('steps').notNullable();
        t.string('created_by', 128).notNullable();
        t.string('created_at', 32).notNullable();
        t.string('started_at', 32);
        t.string('finished_at', 32);
        t.index(['tenant_id', 'state']);
        t.index(['tenant_id', 'created_at']);
      });
    },
  },
  {
    name: '002_execution_route',
    async up(db) {
      await db.schema.alterTable('workflow_executions', (t) => {
        t.string('route', 200);
      });
    },
  },
  {
    // The cluster host that runs the execution (null on a single host): cancel goes there.
    name: '003_execution_host',
    async up(db) {
      await db.schema.alterTable('workflow_executions', (t) => {
        t.string('host', 32);
      });
    },
  },
];

export function toDefinition(r: Record<string, any>): Definition {
  return { id: r.id, tenant_id: r.tenant_id, name: r.name, steps: JSON.parse(r.steps), created_by: r.created_by, created_at: r.created_at };
}

export function toExecution(r: Record<string, any>): Execution {
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    workflow_id: r.workflow_id,
    workflow_name: r.workflow_name,
    state: r.state,
    error: r.error ?? null,
    steps: JSON.parse(r.steps),
    created_by: r.created_by,
    created_at: r.created_at,
    started_at: r.started_at ?? null,
    finished_at: r.finished_at ?? null,
    route: r.route ?? null,
  };
}

/** The row form of an execution's changing fields. */
export function execRow(e: Execution) {
  return { state: e.state, error: e.error, steps: JSON.stringify(e.steps), started_at: e.started_at, finished_at: e.finished_at };
}
