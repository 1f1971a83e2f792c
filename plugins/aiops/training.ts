import type { ModelRegistry } from '../../core/contracts/models';
import type { Db } from '../../core/db';
import { HttpError } from '../../core/errors';
import type { EventBus } from '../../core/events';
import type { Logger } from '../../core/logger';
import type { Mesh } from '../../core/mesh/mesh';
import type { Caller } from '../../core/roles';
import type { Clock } from '../../core/services';
import { loadRows, type Dataset } from './dataset';
import { JOB_FINISHED, json, type JobState } from './store';

export interface JobSpec {
  kind: 'linear' | 'logistic';
  dataset: Dataset;
  epochs: number;
  epochs_per_task: number;
  learning_rate: number;
  l2: number;
  validation_share: number;
}

export interface EpochMetrics {
  epoch: number;
  loss: number;
  validation_loss: number | null;
  metric: string;
  value: number | null;
  validation_value: number | null;
}

export interface Job {
  id: string;
  tenant_id: string;
  model_name: string;
  kind: string;
  state: JobState;
  spec: JobSpec;
  epochs_done: number;
  progress: number;
  metrics: EpochMetrics[];
  result: Record<string, unknown> | null;
  model_id: string | null;
  error: string | null;
  created_by: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export function toJob(r: Record<string, any>): Job {
  const spec = json(r.spec) as JobSpec;
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    model_name: r.model_name,
    kind: r.kind,
    state: r.state,
    spec,
    epochs_done: Number(r.epochs_done),
    progress: Math.round((Number(r.epochs_done) / spec.epochs) * 10_000) / 10_000,
    metrics: json(r.metrics) ?? [],
    result: json(r.result),
    model_id: r.model_id ?? null,
    error: r.error ?? null,
    created_by: r.created_by,
    created_at: r.created_at,
    started_at: r.started_at ?? null,
    finished_at: r.finished_at ?? null,
  };
}

const STOPPED = 'the host stopped while the job was running';

/**
 * Runs training jobs on the compute kernel: the data is read once, then the epochs run as a
 * series of `train` tasks that carry the weights on, so that progress and per-epoch metrics
 * are stored as they come and a cancel aborts the running task on its worker.
 */
export class Trainer {
  private readonly running = new Map<string, { controller: AbortController; done: Promise<void> }>();

  constructor(
    private readonly d: { db: Db; mesh: Mesh; events: EventBus; log: Logger; clock: Clock; registry: ModelRegistry },
  ) {}

  /** Jobs a stopped host left queued or running are marked failed (they cannot resume). */
  async recover(): Promise<void> {
    await this.d.db('aiops_training_jobs').whereIn('state', ['queued', 'running']).update({ state: 'failed', error: STOPPED, finished_at: this.now() });
  }

  async stop(): Promise<void> {
    for (const r of this.running.values()) r.controller.abort('stop');
    await Promise.allSettled([...this.running.values()].map((r) => r.done));
  }

  private now() {
    return this.d.clock.now().toISOString();
  }

  start(job: Job, caller: Caller): void {
    const controller = new AbortController();
    const done = this.run(job, caller, controller.signal)
      .catch((err: Error) => this.d.log.error({ err: err.message, job: job.id }, 'training job failed to record'))
      .finally(() => this.running.delete(job.id));
    this.running.set(job.id, { controller, done });
  }

  /** Cancels a job this host runs; false when it runs nowhere here. */
  async cancel(id: string): Promise<boolean> {
    const r = this.running.get(id);
    if (!r) return false;
    r.controller.abort('cancel');
    await r.done;
    return true;
  }

  /** Writes a job still queued or running; false when it finished elsewhere. */
  private async write(job: Job, patch: Record<string, unknown>): Promise<boolean> {
    const n = await this.d.db('aiops_training_jobs').where({ id: job.id }).whereIn('state', ['queued', 'running']).update(patch);
    if (n && patch.state && patch.state !== job.state) {
      const previous = job.state;
      job.state = patch.state as JobState;
      this.d.events.publish('training_job', { job_id: job.id, tenant_id: job.tenant_id, model_name: job.model_name, state: job.state, previous, epochs_done: job.epochs_done, error: (patch.error as string | undefined) ?? null, model_id: (patch.model_id as string | undefined) ?? null });
    }
    return n > 0;
  }

  private async run(job: Job, caller: Caller, signal: AbortSignal): Promise<void> {
    if (!(await this.write(job, { state: 'running', started_at: this.now() }))) return;
    const s = job.spec;
    let weights: number[] | undefined;
    let bias: number | undefined;
    let last: { scaling: unknown; train_rows: number; validation_rows: number } | null = null;
    const metrics: EpochMetrics[] = [];
    try {
      const { x, y } = await loadRows(this.d.db, job.tenant_id, s.dataset);
      if (s.kind === 'logistic' && new Set(y).size < 2) throw new Error(`the label ${s.dataset.label} has one value in all ${y.length} rows: nothing to learn`);
      for (let done = 0; done < s.epochs; ) {
        const n = Math.min(s.epochs_per_task, s.epochs - done);
        const out = (await this.d.mesh.run('compute', 'train', { kind: s.kind, x, y, epochs: n, learning_rate: s.learning_rate, l2: s.l2, validation_share: s.validation_share, start_epoch: done, weights, bias }, { signal, caller })) as {
          weights: number[]; bias: number; scaling: unknown; train_rows: number; validation_rows: number; epochs: EpochMetrics[];
        };
        ({ weights, bias } = out);
        last = out;
        done += n;
        metrics.push(...out.epochs);
        job.epochs_done = done;
        if (!(await this.write(job, { epochs_done: done, metrics: JSON.stringify(metrics) }))) return;
        this.d.events.publish('training_progress', { job_id: job.id, tenant_id: job.tenant_id, epochs_done: done, epochs: s.epochs, last: out.epochs[out.epochs.length - 1] });
      }
    } catch (err) {
      if (signal.aborted) {
        const stop = signal.reason === 'stop';
        await this.write(job, { state: stop ? 'failed' : 'cancelled', error: stop ? STOPPED : 'cancelled by request', finished_at: this.now() });
        return;
      }
      const msg = err instanceof HttpError ? String(typeof err.detail === 'string' ? err.detail : JSON.stringify(err.detail)) : (err as Error).message;
      await this.write(job, { state: 'failed', error: msg, finished_at: this.now() });
      return;
    }
    const final = metrics[metrics.length - 1]!;
    const result = { features: s.dataset.features, label: s.dataset.label, source: s.dataset.source, weights, bias, scaling: last!.scaling, train_rows: last!.train_rows, validation_rows: last!.validation_rows, final };
    let model;
    try {
      model = await this.d.registry.register(job.tenant_id, job.created_by, {
        name: job.model_name,
        provider: 'local',
        task: s.kind === 'logistic' ? 'classification' : 'regression',
        kernel: 'compute',
        // Runs on this machine: no per-token price.
        price: { input_per_million: '0', output_per_million: '0', currency: 'USD' },
        parameters: result,
        training_job_id: job.id,
      });
    } catch (err) {
      // Trained but not registered (e.g. the version was taken meanwhile): the job says why.
      await this.write(job, { state: 'failed', result: JSON.stringify(result), error: `training finished but the model could not be registered: ${(err as Error).message}`, finished_at: this.now() });
      return;
    }
    await this.write(job, { state: 'succeeded', result: JSON.stringify(result), model_id: model.id, finished_at: this.now() });
  }

  isFinished(state: JobState) {
    return JOB_FINISHED.includes(state);
  }
}
