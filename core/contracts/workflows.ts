// Workflow definitions and runs for other plugins: provided by plugin `workflows`, used by
// autonomous (skills, generated agents, variants and canaries), enterprise (processes) and
// copilot (run a workflow). Every call is the caller's: tenant-scoped and recorded as theirs.
import type { ValidationIssue } from '../errors';
import { createServiceRef } from '../plugin';
import type { Caller } from '../roles';

/** The bounds of a step that the workflows API and the exchange format (interop) both keep. */
export const STEP_LIMITS = { taskMax: 200, timeoutMs: { min: 100, max: 3_600_000 }, retries: { min: 0, max: 5 } } as const;

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
  /** Set when a router chose the steps of this run (see RunRouter). */
  route?: string | null;
}

/**
 * Chooses the steps of a run started without explicit steps (POST /workflows/{id}/run or
 * start() without steps): a canary sends a share of a workflow's runs to its variant. Null
 * leaves the run alone. `onFinished` is called on this host when the execution has finished;
 * it logs its own failures (a rejection is ignored).
 */
export type RunRouter = (caller: Caller, def: WorkflowDefinition) => Promise<{ steps: WorkflowStep[]; label: string; onFinished(e: WorkflowExecution): Promise<void> } | null>;

/**
 * A kind of step that is not a kernel task, registered by the plugin that runs it (interop's
 * `http` steps call imported OpenAPI operations). A step selects it by its `kernel` field.
 */
export interface StepType {
  /** The `kernel` value that selects this type; never a kernel id of the mesh. */
  name: string;
  /**
   * Checks a step's task and input when a definition is stored (synchronously: what needs
   * storage is checked when the step runs). Issue locations are relative to the step,
   * e.g. `['task']` or `['input', 'path']`; issues at a field holding a reference are dropped.
   */
  check(task: string, input: unknown): ValidationIssue[];
  /** Runs the step for the execution's caller; a thrown HttpError 502 or 503 is retried. */
  run(caller: Caller, task: string, input: unknown, opts: { signal: AbortSignal; timeoutMs?: number }): Promise<unknown>;
}

export interface Workflows {
  /** Adds a step type (a boot-time call from the providing plugin's start). */
  registerStepType(type: StepType): void;
  /** Adds a run router (a boot-time call); the first router that answers decides a run. */
  registerRouter(router: RunRouter): void;
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
  /** The caller's tenant's definitions with these ids or names (either list may be empty). */
  find(caller: Caller, where: { ids?: string[]; names?: string[] }): Promise<WorkflowDefinition[]>;
  /** Checks steps without storing anything (422 naming the bad step). */
  check(steps: WorkflowStep[]): void;
}

export const workflowsRef = createServiceRef<Workflows>('workflows');
