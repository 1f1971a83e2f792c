import { HttpError } from '../../core/errors';
import { nowIso } from '../../core/db';
import type { StepType } from '../../core/contracts/workflows';
import type { Caller } from '../../core/roles';
import type { Services } from '../../core/services';
import { resolve, RefError } from '../../core/step-refs';
import { execRow, FINISHED, toExecution, type Definition, type ExecState, type Execution } from './store';

export const STOPPED_REASON = 'the host stopped while the execution was running';
type Why = 'cancel' | 'stop';

/** Task failures worth another attempt: the kernel could not take the task, or it failed there. */
function retryable(err: unknown): boolean {
  return err instanceof HttpError && (err.status === 502 || err.status === 503);
}

function message(err: unknown): string {
  if (err instanceof HttpError) return typeof err.detail === 'string' ? err.detail : JSON.stringify(err.detail);
  return (err as Error)?.message ?? String(err);
}

/**
 * Runs executions on this host: one step after the other on the kernels (services.mesh.run),
 * each with the execution's AbortSignal so that a cancel aborts the running task on its worker.
 * The runner writes an execution only while storage still has it pending or running, so an
 * execution cancelled in storage (by another host) stops before its next step.
 */
export class Runner {
  private readonly running = new Map<string, { controller: AbortController; done: Promise<unknown> }>();
  /** Step types other plugins registered (by the `kernel` value that selects them). */
  readonly types = new Map<string, StepType>();
  private leave: () => void = () => undefined;

  constructor(private readonly services: Pick<Services, 'db' | 'events' | 'mesh' | 'log'>) {}

  get log() {
    return this.services.log;
  }

  /** Marks executions left pending or running by a host that stopped (see README: restart rule). */
  async recover(): Promise<number> {
    const { mesh } = this.services;
    // In a cluster, only this host's executions and those of hosts that are gone: a live host's run goes on.
    const live = new Set(mesh.hosts().filter((h) => h.live && !h.this_host).map((h) => h.host_id));
    const rows = (await this.services.db('workflow_executions').whereIn('state', ['pending', 'running'])).filter((r: { host: string | null }) => !mesh.hostId || !live.has(r.host));
    for (const r of rows) {
      const e = toExecution(r);
      this.finishSteps(e, 'failed', STOPPED_REASON);
      await this.save(e, 'failed', STOPPED_REASON);
    }
    return rows.length;
  }

  /** Runs an execution; the promise settles when it has finished (whatever its outcome). */
  start(e: Execution, def: Definition, caller: Caller): Promise<unknown> {
    const controller = new AbortController();
    const done = Promise.resolve()
      .then(() => this.execute(e, def, caller, controller.signal))
      .catch((err: Error) => this.services.log.error({ err: err.message, execution: e.id }, 'workflow execution failed to record'))
      .finally(() => this.running.delete(e.id));
    this.running.set(e.id, { controller, done });
    return done;
  }

  /**
   * In a cluster: lets other hosts cancel what this host runs, and fails the executions of a
   * host that stopped heartbeating (the conditional write makes it once across hosts).
   */
  joinCluster(): void {
    const { mesh, events } = this.services;
    mesh.bus?.handle('workflow.cancel', async (req) => ({ status: 200, body: { cancelled: await this.cancel(req.node_id) } }));
    this.leave = events.subscribe('cluster.host_lost', (ev) => {
      void this.failHost(String(ev.data.host_id)).catch((err: Error) => this.log.warn({ err: err.message }, 'workflows: failing a lost host\'s executions'));
    });
  }

  async failHost(hostId: string): Promise<number> {
    const reason = `host ${hostId}, which ran the execution, stopped heartbeating`;
    const rows = await this.services.db('workflow_executions').where({ host: hostId }).whereIn('state', ['pending', 'running']);
    for (const r of rows) {
      const e = toExecution(r);
      this.finishSteps(e, 'failed', reason);
      await this.save(e, 'failed', reason);
    }
    return rows.length;
  }

  /** Cancels an execution this host runs; false when it runs nowhere here. */
  async cancel(id: string): Promise<boolean> {
    const r = this.running.get(id);
    if (!r) return false;
    r.controller.abort('cancel' satisfies Why);
    await r.done;
    return true;
  }

  async stop(): Promise<void> {
    this.leave();
    const all = [...this.running.values()];
    for (const r of all) r.controller.abort('stop' satisfies Why);
    await Promise.allSettled(all.map((r) => r.done));
  }

  private async execute(e: Execution, def: Definition, caller: Caller, signal: AbortSignal): Promise<unknown> {
    e.started_at = nowIso();
    if (!(await this.save(e, 'running', null))) return;
    const outputs = new Map<string, unknown>();
    for (let i = 0; i < def.steps.length; i++) {
      const sd = def.steps[i];
      const step = e.steps[i];
      if (signal.aborted) break;
      step.state = 'running';
      step.started_at = nowIso();
      const t0 = performance.now();
      // Finished elsewhere (cancelled in storage by another host): stop here.
      if (!(await this.write(e))) return;
      const end = (state: 'succeeded' | 'failed' | 'cancelled', error: string | null, output: unknown = null) => {
        step.state = state;
        step.error = error;
        step.output = output;
        step.finished_at = nowIso();
        step.duration_ms = Math.round((performance.now() - t0) * 1000) / 1000;
      };
      let input: unknown;
      try {
        input = resolve(sd.input, outputs);
      } catch (err) {
        if (!(err instanceof RefError)) throw err;
        end('failed', err.message);
        this.finishSteps(e, 'skipped', null);
        return this.save(e, 'failed', `step "${sd.id}" failed: ${err.message}`);
      }
      const attempts = 1 + (sd.retries ?? 0);
      for (let n = 1; n <= attempts; n++) {
        step.attempts = n;
        try {
          const type = this.types.get(sd.kernel);
          const output = type
            ? await type.run(caller, sd.task, input, { signal, timeoutMs: sd.timeout_ms })
            : await this.services.mesh.run(sd.kernel, sd.task, input, { signal, timeoutMs: sd.timeout_ms, caller });
          end('succeeded', null, output);
          outputs.set(sd.id, output);
          break;
        } catch (err) {
          if (signal.aborted) {
            end(signal.reason === 'stop' ? 'failed' : 'cancelled', signal.reason === 'stop' ? STOPPED_REASON : 'cancelled while running: the task was aborted');
            break;
          }
          if (n < attempts && retryable(err)) continue;
          end('failed', message(err));
          this.finishSteps(e, 'skipped', null);
          return this.save(e, 'failed', `step "${sd.id}" failed: ${message(err)}`);
        }
      }
      if (signal.aborted) break;
      if (!(await this.write(e))) return;
    }
    if (signal.aborted) {
      const stop = signal.reason === 'stop';
      this.finishSteps(e, stop ? 'failed' : 'cancelled', stop ? STOPPED_REASON : 'cancelled');
      return this.save(e, stop ? 'failed' : 'cancelled', stop ? STOPPED_REASON : 'cancelled by request');
    }
    return this.save(e, 'succeeded', null);
  }

  /** A running step ends as `running`; steps not started are skipped. */
  finishSteps(e: Execution, running: 'failed' | 'cancelled' | 'skipped', error: string | null): void {
    for (const s of e.steps) {
      if (s.state === 'running') {
        s.state = running === 'skipped' ? 'failed' : running;
        s.error = error;
        s.finished_at = nowIso();
      } else if (s.state === 'pending') s.state = 'skipped';
    }
  }

  /** Writes an execution that is still pending or running in storage; false when it was finished elsewhere. */
  private async write(e: Execution): Promise<boolean> {
    const n = await this.services.db('workflow_executions').where({ id: e.id, tenant_id: e.tenant_id }).whereIn('state', ['pending', 'running']).update(execRow(e));
    return n > 0;
  }

  /** Stores a new state and publishes it as a `workflow_status` event. */
  async save(e: Execution, state: ExecState, error: string | null): Promise<boolean> {
    const previous = e.state;
    e.state = state;
    e.error = error;
    if (FINISHED.includes(state)) e.finished_at = nowIso();
    if (!(await this.write(e))) return false;
    if (previous !== state) {
      this.services.events.publish('workflow_status', {
        execution_id: e.id,
        workflow_id: e.workflow_id,
        workflow_name: e.workflow_name,
        tenant_id: e.tenant_id,
        state,
        previous,
        error,
        steps: e.steps.map((s) => ({ id: s.id, state: s.state })),
      });
    }
    return true;
  }
}
