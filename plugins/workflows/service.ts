// The workflows service other plugins use (core/contracts/workflows.ts): definitions and runs
// on behalf of a caller, checked and recorded exactly as the HTTP routes do.
import crypto from 'node:crypto';
import type { Db } from '../../core/db';
import { nowIso } from '../../core/db';
import type { EventBus } from '../../core/events';
import type { Mesh } from '../../core/mesh/mesh';
import type { Caller } from '../../core/roles';
import { tenantScope } from '../../core/tenancy';
import type { RunRouter, StepType, WorkflowDefinition, WorkflowExecution, WorkflowStep, Workflows } from '../../core/contracts/workflows';
import type { Runner } from './runner';
import { checkSteps, definitionBody } from './schemas';
import { toDefinition, toExecution, type Definition, type Execution } from './store';
import { invalid, Unprocessable } from '../../core/errors';

export class WorkflowService implements Workflows {
  private readonly routers: RunRouter[] = [];

  constructor(
    private readonly db: Db,
    private readonly events: EventBus,
    private readonly mesh: Mesh,
    private readonly runner: Runner,
  ) {}

  async definition(caller: Caller, id: string): Promise<WorkflowDefinition> {
    return toDefinition(await tenantScope(this.db, caller).get('workflow_definitions', { id }, 'Workflow definition'));
  }

  registerStepType(type: StepType): void {
    if (this.mesh.hasKernel(type.name) || this.runner.types.has(type.name)) throw new Error(`step type "${type.name}" is taken (a kernel or another step type)`);
    this.runner.types.set(type.name, type);
  }

  registerRouter(router: RunRouter): void {
    this.routers.push(router);
  }

  async find(caller: Caller, where: { ids?: string[]; names?: string[] }): Promise<WorkflowDefinition[]> {
    const ids = where.ids ?? [];
    const names = where.names ?? [];
    if (!ids.length && !names.length) return [];
    const rows: Array<Record<string, unknown>> = await tenantScope(this.db, caller).select('workflow_definitions').where((q) => q.whereIn('id', ids).orWhereIn('name', names)).orderBy('created_at', 'desc');
    return rows.map((r) => toDefinition(r));
  }

  check(steps: WorkflowStep[]): void {
    const parsed = definitionBody.shape.steps.safeParse(steps);
    if (!parsed.success) throw new Unprocessable(parsed.error.issues.map((i) => ({ loc: ['body', 'steps', ...(i.path as Array<string | number>)], msg: i.message, type: i.code })));
    checkSteps(this.mesh, this.runner.types, parsed.data);
  }

  async create(caller: Caller, name: string, steps: WorkflowStep[]): Promise<WorkflowDefinition> {
    if (!name.trim() || name.length > 200) throw invalid(['body', 'name'], 'a name of 1 to 200 characters');
    this.check(steps);
    const def = { id: crypto.randomUUID(), name, steps, created_by: caller.id, created_at: nowIso() };
    await tenantScope(this.db, caller).insert('workflow_definitions', { ...def, steps: JSON.stringify(steps) });
    return { ...def, tenant_id: caller.tenantId };
  }

  async replaceSteps(caller: Caller, id: string, steps: WorkflowStep[]): Promise<WorkflowDefinition> {
    this.check(steps);
    await tenantScope(this.db, caller).update('workflow_definitions', { id }, { steps: JSON.stringify(steps) }, 'Workflow definition');
    return this.definition(caller, id);
  }

  async start(caller: Caller, id: string, opts: { steps?: WorkflowStep[] } = {}): Promise<{ execution: WorkflowExecution; done: Promise<WorkflowExecution> }> {
    const stored = toDefinition(await tenantScope(this.db, caller).get('workflow_definitions', { id }, 'Workflow definition'));
    if (opts.steps) this.check(opts.steps);
    return opts.steps ? this.startDefinition(caller, { ...stored, steps: opts.steps }) : this.startRouted(caller, stored);
  }

  /** Starts a run of a stored definition, with the steps a router chooses (a canary's share). */
  async startRouted(caller: Caller, def: Definition): Promise<{ execution: Execution; done: Promise<Execution> }> {
    for (const router of this.routers) {
      const r = await router(caller, def);
      if (!r) continue;
      const started = await this.startDefinition(caller, { ...def, steps: r.steps }, r.label);
      // The router reports its own failures; one must not turn the run's outcome into a rejection.
      const done = started.done.then(async (e) => {
        await r.onFinished(e).catch(() => undefined);
        return e;
      });
      return { execution: started.execution, done };
    }
    return this.startDefinition(caller, def);
  }

  /** Records a pending execution, publishes it and hands it to the runner. */
  async startDefinition(caller: Caller, def: Definition, route: string | null = null): Promise<{ execution: Execution; done: Promise<Execution> }> {
    const e: Execution = {
      id: crypto.randomUUID(),
      tenant_id: caller.tenantId,
      workflow_id: def.id,
      workflow_name: def.name,
      state: 'pending',
      error: null,
      steps: def.steps.map((s) => ({ id: s.id, kernel: s.kernel, task: s.task, state: 'pending', attempts: 0, started_at: null, finished_at: null, duration_ms: null, output: null, error: null })),
      created_by: caller.id,
      created_at: nowIso(),
      started_at: null,
      finished_at: null,
      route,
    };
    const { tenant_id: _t, ...row } = e;
    await tenantScope(this.db, caller).insert('workflow_executions', { ...row, host: this.mesh.hostId, steps: JSON.stringify(e.steps) });
    const answer = structuredClone(e);
    this.events.publish('workflow_status', { execution_id: e.id, workflow_id: e.workflow_id, workflow_name: e.workflow_name, tenant_id: e.tenant_id, state: 'pending', previous: null, error: null, steps: e.steps.map((s) => ({ id: s.id, state: s.state })) });
    const finished = this.runner.start(e, def, caller);
    const done = finished.then(async () => toExecution(await this.db('workflow_executions').where({ id: e.id }).first()));
    return { execution: answer, done };
  }
}
