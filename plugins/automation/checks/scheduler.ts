import { Cron } from 'croner';
import type { Config } from '../../../core/config';
import { nowIso, type Db } from '../../../core/db';
import type { Leases } from '../../../core/leases';
import type { Logger } from '../../../core/logger';

export type JobName = 'health_check' | 'https_check' | 'certificate_renewal' | 'database_backup';
export type JobFn = () => Promise<{ ok: boolean; summary: Record<string, unknown> }>;

interface LastRun {
  at: string;
  ok: boolean;
  by: string;
  trigger: 'cron' | 'immediate';
  summary: Record<string, unknown>;
}

/**
 * Runs the checks on cron expressions (croner). Every host keeps the timers, but a job runs
 * only on the host holding the lease `automation.scheduler` (core.leases: one runner across
 * hosts); a host that stops renewing loses it after automation.scheduler.leaseMs. Started and
 * stopped state is persisted in automation_scheduler, so it survives restarts and holds for
 * every host.
 */
export class Scheduler {
  static readonly LEASE = 'automation.scheduler';
  private readonly crons: Array<{ name: JobName; expr: string; cron: Cron }> = [];
  private renewTimer?: NodeJS.Timeout;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly log: Logger,
    private readonly jobs: Record<JobName, JobFn>,
    private readonly leases: Leases,
  ) {}

  get owner(): string {
    return this.leases.owner;
  }

  async start(): Promise<void> {
    await this.db('automation_scheduler').insert({ id: 'main', running: true, last_runs: '{}', updated_at: nowIso() }).onConflict('id').ignore();
    const c = this.config.automation.scheduler;
    const exprs: Record<JobName, string> = { health_check: c.healthCron, https_check: c.httpsCron, certificate_renewal: c.renewalCron, database_backup: c.backupCron };
    for (const name of Object.keys(exprs) as JobName[]) {
      const cron = new Cron(exprs[name], { protect: true, timezone: 'UTC' }, () => this.track(this.fire(name)));
      this.crons.push({ name, expr: exprs[name], cron });
    }
    this.renewTimer = setInterval(() => this.track(this.claim()), Math.max(100, Math.floor(c.leaseMs / 3)));
    this.renewTimer.unref();
    await this.claim();
  }

  async stop(): Promise<void> {
    for (const c of this.crons) c.cron.stop();
    clearInterval(this.renewTimer);
    await Promise.all([...this.inFlight]);
    // Hand the lease over at once rather than after it runs out.
    await this.leases.release(Scheduler.LEASE).catch(() => undefined);
  }

  private track(p: Promise<unknown>): void {
    const w = p.catch((err: Error) => this.log.warn({ err: err.message }, 'scheduler job failed'));
    this.inFlight.add(w);
    void w.finally(() => this.inFlight.delete(w));
  }

  /** Takes or renews the lease when the scheduler is running; true when this host holds it. */
  async claim(): Promise<boolean> {
    const row = await this.db('automation_scheduler').where({ id: 'main' }).first('running');
    if (!row?.running) return false;
    return this.leases.claim(Scheduler.LEASE, this.config.automation.scheduler.leaseMs);
  }

  private async fire(name: JobName): Promise<void> {
    if (!(await this.claim())) return;
    await this.runJob(name, 'cron');
  }

  async runJob(name: JobName, trigger: LastRun['trigger']): Promise<LastRun> {
    let run: LastRun;
    try {
      const r = await this.jobs[name]();
      run = { at: nowIso(), ok: r.ok, by: this.owner, trigger, summary: r.summary };
    } catch (err) {
      run = { at: nowIso(), ok: false, by: this.owner, trigger, summary: { error: (err as Error).message } };
    }
    // Read-modify-write of one JSON cell: jobs of one scheduler run on one host (the lease).
    const row = await this.db('automation_scheduler').where({ id: 'main' }).first();
    const last = { ...(JSON.parse(row?.last_runs ?? '{}') as Record<string, LastRun>), [name]: run };
    await this.db('automation_scheduler').where({ id: 'main' }).update({ last_runs: JSON.stringify(last), updated_at: nowIso() });
    return run;
  }

  async runAll(): Promise<Record<JobName, LastRun>> {
    const out = {} as Record<JobName, LastRun>;
    for (const name of Object.keys(this.jobs) as JobName[]) out[name] = await this.runJob(name, 'immediate');
    return out;
  }

  /** Persisted running flag; a stop also gives up the lease. */
  async setRunning(running: boolean): Promise<void> {
    await this.db('automation_scheduler').where({ id: 'main' }).update({ running, updated_at: nowIso() });
    if (running) await this.claim();
    else await this.leases.release(Scheduler.LEASE);
  }

  async status() {
    const row = await this.db('automation_scheduler').where({ id: 'main' }).first();
    const last = JSON.parse(row?.last_runs ?? '{}') as Record<string, LastRun>;
    // A stopped scheduler has no runner, whatever lease another host has not yet let run out.
    const holder = row?.running ? await this.leases.holder(Scheduler.LEASE) : null;
    return {
      running: !!row?.running,
      runner: holder?.owner ?? null,
      lease_until: holder?.lease_until ?? null,
      this_host: this.owner,
      this_host_runs_jobs: !!holder?.held_here,
      jobs: this.crons.map((c) => ({
        name: c.name,
        cron: c.expr,
        next_run: row?.running ? (c.cron.nextRun()?.toISOString() ?? null) : null,
        last_run: last[c.name] ?? null,
      })),
    };
  }
}
