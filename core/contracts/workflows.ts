// Workflow definitions and runs for other plugins: provided by plugin `workflows`, used by
// autonomous (skills, generated agents, variants and canaries), enterprise (processes) and
// copilot (run a workflow). Every call is the caller's: tenant-scoped and recorded as theirs.
import { createServiceRef } from '../plugin';
import type { Caller } from '../roles';

export interface WorkflowStep {
  id: string;
  kernel: string;
  task: string;
  input: unknown;
  timeout_ms?: number;
  retries?: number;
}

export interface WorkflowDefinition {
  id: string;
  tenant_id: string;
  name: string;
  steps: WorkflowStep[];
  created_by: string;
  created_at: string;
}

export interface WorkflowExecution {
  id: string;
  tenant_id: string;
  workflow_id: string;
  workflow_name: string;
  state: 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  error: string | null;
  steps: Array<{ id: string; kernel: string; task: string; state: string; attempts: number; started_at: string | null; finished_at: string | null; duration_ms: number | null; output: unknown; error: string | null }>;
  created_by: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface Workflows {
  /** 404 for another tenant's definition. */
  definition(caller: Caller, id: string): Promise<WorkflowDefinition>;
  /** Checks the steps as POST /workflows does (422 naming the bad step) and stores the definition. */
  create(caller: Caller, name: string, steps: WorkflowStep[]): Promise<WorkflowDefinition>;
  /** Replaces a definition's steps (checked the same way). */
  replaceSteps(caller: Caller, id: string, steps: WorkflowStep[]): Promise<WorkflowDefinition>;
  /**
   * Starts an execution of a definition, optionally with other steps (a variant's); `done`
   * settles when it finishes (succeeded, failed or cancelled).
   */
  start(caller: Caller, id: string, opts?: { steps?: WorkflowStep[] }): Promise<{ execution: WorkflowExecution; done: Promise<WorkflowExecution> }>;
  /** Checks steps without storing anything (422 naming the bad step). */
  check(steps: WorkflowStep[]): void;
}

export const workflowsRef = createServiceRef<Workflows>('workflows');
