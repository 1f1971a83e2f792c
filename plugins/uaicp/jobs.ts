import crypto from 'node:crypto';
import type { Db } from '../../core/db';
import { HttpError } from '../../core/errors';
import type { EventBus } from '../../core/events';
import type { Logger } from '../../core/logger';
import type { Clock } from '../../core/services';
import { parse } from './store';

import { JOB_STATES } from '../../core/jobs';

export { JOB_STATES };
export type JobKind = 'benchmark' | 'optimize' | 'workflow';

export interface UJob {
  id: string;
  tenant_id: string;
  kind: JobKind;
  state: (typeof JOB_STATES)[number];
  input: Record<string, unknown>;
  result: Record<string, unknown> | null;
  error: string | null;
  created_by: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export function toJob(r: Record<string, any>): UJob {
  return { ...r, input: parse(r.input), result: parse(r.result), error: r.error ?? null, started_at: r.started_at ?? null, finished_at: r.finished_at ?? null } as UJob;
}

const STOPPED = 'the host stopped while the job was running';

/**
 * The long operations of /uaicp (benchmarks, global optimisation, cross-cloud workflow runs):
 * stored as jobs that move queued → running → succeeded | failed, each change published as a
 * `uaicp_job` event; the work itself runs on the kernels.
 */
export class Jobs {
  private readonly running = new Map<string, { controller: AbortController; done: Promise<void> }>();

  constructor(private readonly d: { db: Db; events: EventBus; log: Logger; clock: Clock }) {}

  async recover(): Promise<void> {
    await this.d.db('uaicp_jobs').whereIn('state', ['queued', 'running']).update({ state: 'failed', error: STOPPED, finished_at: this.d.clock.now().toISOString() });
  }

  async stop(): Promise<void> {
    for (const r of this.running.values()) r.controller.abort('stop');
    await Promise.allSettled([...this.running.values()].map((r) => r.done));
  }

  /** Stores a queued job and starts `work`; its result is stored when it finishes. */
  async start(tenantId: string, actor: string, kind: JobKind, input: Record<string, unknown>, work: (signal: AbortSignal, job: UJob) => Promise<Record<string, unknown>>): Promise<UJob> {
    const row = { id: crypto.randomUUID(), tenant_id: tenantId, kind, state: 'queued', input: JSON.stringify(input), result: null, error: null, created_by: actor, created_at: this.d.clock.now().toISOString(), started_at: null, finished_at: null };
    await this.d.db('uaicp_jobs').insert(row);
    const job = toJob(row);
    this.publish(job, null);
    const controller = new AbortController();
    const done = this.run(structuredClone(job), work, controller.signal)
      .catch((err: Error) => this.d.log.error({ err: err.message, job: job.id }, 'uaicp job failed to record'))
      .finally(() => this.running.delete(job.id));
    this.running.set(job.id, { controller, done });
    return job;
  }

  private publish(job: UJob, previous: string | null) {
    this.d.events.publish('uaicp_job', { job_id: job.id, tenant_id: job.tenant_id, kind: job.kind, state: job.state, previous, error: job.error });
  }

  private async move(job: UJob, patch: Partial<Record<keyof UJob, unknown>>): Promise<void> {
    const previous = job.state;
    Object.assign(job, patch);
    await this.d.db('uaicp_jobs').where({ id: job.id }).update({ ...patch, ...(patch.result ? { result: JSON.stringify(patch.result) } : {}) });
    this.publish(job, previous);
  }

  private async run(job: UJob, work: (signal: AbortSignal, job: UJob) => Promise<Record<string, unknown>>, signal: AbortSignal): Promise<void> {
    await this.move(job, { state: 'running', started_at: this.d.clock.now().toISOString() });
    try {
      const result = await work(signal, job);
      await this.move(job, { state: 'succeeded', result, finished_at: this.d.clock.now().toISOString() });
    } catch (err) {
      const msg = signal.aborted ? STOPPED : err instanceof HttpError ? (typeof err.detail === 'string' ? err.detail : JSON.stringify(err.detail)) : (err as Error).message;
      await this.move(job, { state: 'failed', error: msg, finished_at: this.d.clock.now().toISOString() });
    }
  }

  /** Waits for a job this host runs (tests and shutdown). */
  async settled(id: string): Promise<void> {
    await this.running.get(id)?.done;
  }
}
