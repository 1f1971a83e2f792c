import crypto from 'node:crypto';
import fs from 'node:fs';
import type { ActionLog } from '../../../core/actions';
import type { Config } from '../../../core/config';
import { isPostgres, migrate, nowIso, type Db } from '../../../core/db';
import type { EventBus } from '../../../core/events';
import { NotFound } from '../../../core/errors';
import type { Logger } from '../../../core/logger';
import type { Mesh } from '../../../core/mesh/mesh';
import type { Caller } from '../../../core/roles';
import { StateConflict } from '../errors';
import type { Rolling, Step } from '../deploy/rolling';
import { backup, restore, scratchCopy } from './backup';
import { candidateBuild, compare, runningBuild, type Build } from './candidate';

export interface UpgradeRow {
  id: string;
  kind: 'validation' | 'plan' | 'execution';
  state: string;
  candidate: string | null;
  report: string;
  reason: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export const upgradeView = (r: UpgradeRow) => ({
  id: r.id, kind: r.kind, state: r.state, candidate: r.candidate, report: JSON.parse(r.report) as Record<string, unknown>, reason: r.reason, created_by: r.created_by, created_at: r.created_at, updated_at: r.updated_at,
});

/**
 * Upgrades: validate a candidate build against the running one (with a dry run of its pending
 * migrations on a copy of the database), plan the steps, and execute them (backup, the
 * migrations plugin by plugin, a rolling restart of every kernel, verification), restoring
 * the backup when a step fails. Validation and execution run in the background (202).
 */
export class Upgrades {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly mesh: Mesh,
    private readonly rolling: Rolling,
    private readonly actions: ActionLog,
    private readonly events: EventBus,
    private readonly log: Logger,
  ) {}

  async get(id: string, kind: UpgradeRow['kind']): Promise<UpgradeRow> {
    const row = await this.db<UpgradeRow>('automation_upgrades').where({ id, kind }).first();
    if (!row) throw new NotFound(`Upgrade ${kind} not found`);
    return row;
  }

  private build(candidate: string | null): Build {
    return candidate ? candidateBuild(this.config, candidate) : runningBuild(this.config, this.mesh);
  }

  private async insert(caller: Caller, kind: UpgradeRow['kind'], state: string, candidate: string | null, report: Record<string, unknown>): Promise<UpgradeRow> {
    const at = nowIso();
    const row: UpgradeRow = { id: crypto.randomUUID(), kind, state, candidate, report: JSON.stringify(report), reason: null, created_by: caller.id, created_at: at, updated_at: at };
    await this.db('automation_upgrades').insert(row);
    await this.record(caller.id, `upgrade_${kind}`, row.id, 'succeeded', { candidate });
    return row;
  }

  private async update(row: UpgradeRow, patch: Partial<UpgradeRow>): Promise<void> {
    await this.db('automation_upgrades').where({ id: row.id }).update({ ...patch, updated_at: nowIso() });
    if (patch.state) this.events.publish('upgrade_status', { id: row.id, kind: row.kind, state: patch.state, reason: patch.reason ?? null });
  }

  private background(p: Promise<void>): void {
    const w = p.catch((err: Error) => this.log.error({ err: err.message }, 'upgrade work failed'));
    this.inFlight.add(w);
    void w.finally(() => this.inFlight.delete(w));
  }

  async validate(caller: Caller, candidate: string | null): Promise<UpgradeRow> {
    const build = this.build(candidate);
    const row = await this.insert(caller, 'validation', 'queued', candidate, {});
    this.background(this.runValidation(row, build));
    return row;
  }

  private async runValidation(row: UpgradeRow, build: Build): Promise<void> {
    await this.update(row, { state: 'running' });
    try {
      const diff = await compare(this.db, runningBuild(this.config, this.mesh), build);
      const dry = await this.dryRun(row.id, build);
      const ok = dry.ok;
      await this.update(row, { state: ok ? 'succeeded' : 'failed', report: JSON.stringify({ ...diff, dry_run: dry, feasible: ok }), reason: ok ? null : `the dry run failed: ${dry.error}` });
    } catch (err) {
      await this.update(row, { state: 'failed', reason: (err as Error).message });
    }
  }

  /** The candidate's migrations on a copy of the database; the copy is dropped after. */
  private async dryRun(id: string, build: Build) {
    const t0 = performance.now();
    const copy = await scratchCopy(this.db, this.config, id);
    try {
      const before = new Set(((await copy.db('schema_migrations').select('name')) as Array<{ name: string }>).map((r) => r.name));
      let error: string | null = null;
      try {
        for (const p of build.plugins) await migrate(copy.db, [{ owner: p.id, migrations: p.migrations }]);
      } catch (err) {
        error = (err as Error).message;
      }
      const applied = ((await copy.db('schema_migrations').select('name')) as Array<{ name: string }>).map((r) => r.name).filter((n) => !before.has(n));
      return { ok: !error, database: isPostgres(this.db) ? 'postgres (scratch schema)' : 'sqlite (online backup copy)', applied, error, duration_ms: Math.round(performance.now() - t0) };
    } finally {
      await copy.drop();
    }
  }

  /** Ordered steps from a succeeded validation. Kernel restarts are rolling: no downtime. */
  async plan(caller: Caller, validationId: string): Promise<UpgradeRow> {
    const v = await this.get(validationId, 'validation');
    if (v.state !== 'succeeded') throw new StateConflict(v.state, [], `Validation ${v.id} is ${v.state}; plan from a succeeded validation`);
    const report = JSON.parse(v.report) as { pending_migrations: Record<string, string[]>; dry_run: { duration_ms: number } };
    const steps = [
      { n: 1, action: 'backup', detail: isPostgres(this.db) ? 'pg_dump of the service schema' : 'SQLite online backup to a file', expected_downtime_seconds: 0 },
      ...Object.entries(report.pending_migrations).map(([plugin, names], i) => ({ n: 2 + i, action: 'migrate', detail: `${plugin}: ${names.join(', ')}`, expected_downtime_seconds: 0 })),
      ...this.mesh.kernels().map((k, i) => ({ n: 2 + Object.keys(report.pending_migrations).length + i, action: 'rolling_restart', detail: `kernel ${k.id}: ${k.nodes.filter((x) => x.state !== 'drained').length} nodes replaced one at a time behind the health gate`, expected_downtime_seconds: 0 })),
      { n: 0, action: 'verify', detail: 'every migration recorded; every kernel answers', expected_downtime_seconds: 0 },
    ].map((s, i) => ({ ...s, n: i + 1 }));
    // Migrations run online; writes to the tables they change wait about as long as the dry run took.
    const lockMs = Object.keys(report.pending_migrations).length ? report.dry_run.duration_ms : 0;
    return this.insert(caller, 'plan', 'planned', v.candidate, { validation_id: v.id, steps, expected_downtime_seconds: 0, expected_write_pause_ms: lockMs });
  }

  async execute(caller: Caller, planId: string): Promise<UpgradeRow> {
    const plan = await this.get(planId, 'plan');
    if (plan.state !== 'planned') throw new StateConflict(plan.state, [], `Plan ${plan.id} is ${plan.state}; only a planned upgrade can be executed`);
    const busy = await this.db('automation_upgrades').where({ kind: 'execution' }).whereIn('state', ['queued', 'running']).first('id');
    if (busy) throw new StateConflict('running', [], `Upgrade ${busy.id} is running`);
    const n = await this.db('automation_upgrades').where({ id: plan.id, state: 'planned' }).update({ state: 'executed', updated_at: nowIso() });
    if (!n) throw new StateConflict('executed', []);
    const build = this.build(plan.candidate);
    const row = await this.insert(caller, 'execution', 'queued', plan.candidate, { plan_id: plan.id, steps: [] });
    this.background(this.runExecution(row, build));
    return row;
  }

  private async runExecution(row: UpgradeRow, build: Build): Promise<void> {
    const steps: Array<Record<string, unknown>> = [];
    const save = (state?: string, reason?: string | null) => this.update(row, { ...(state ? { state } : {}), ...(reason !== undefined ? { reason } : {}), report: JSON.stringify({ plan_id: (JSON.parse(row.report) as { plan_id: string }).plan_id, steps }) });
    await save('running');
    let file: string | null = null;
    try {
      file = await backup(this.db, this.config, row.id);
      steps.push({ action: 'backup', ok: true, file, bytes: fs.statSync(file).size, at: nowIso() });
      await save();
      for (const p of build.plugins) {
        await migrate(this.db, [{ owner: p.id, migrations: p.migrations }]);
        steps.push({ action: 'migrate', plugin: p.id, ok: true, at: nowIso() });
      }
      await save();
      const actor = { source: 'automated' as const, actor: 'automation.upgrade', cause: `upgrade ${row.id}` };
      for (const k of this.mesh.kernels()) {
        const rolled: Step[] = [];
        await this.rolling.converge(k.id, this.rolling.shape(k.id).map((n) => ({ threads: n.threads, settings: n.settings })), actor, async (s) => void rolled.push(s), true);
        steps.push({ action: 'rolling_restart', kernel: k.id, ok: true, steps: rolled, at: nowIso() });
        await save();
      }
      const applied = new Set(((await this.db('schema_migrations').select('name')) as Array<{ name: string }>).map((r) => r.name));
      const missing = build.plugins.flatMap((p) => p.migrations.map((m) => `${p.id}/${m.name}`)).filter((n) => !applied.has(n));
      const pings = await Promise.all(this.mesh.kernels().map((k) => this.mesh.ping(k.id)));
      const ok = !missing.length && pings.every((p) => p.ok);
      steps.push({ action: 'verify', ok, missing_migrations: missing, kernels_answering: pings.filter((p) => p.ok).length, at: nowIso() });
      if (!ok) throw new Error(`verification failed: ${missing.length} migrations missing, ${pings.filter((p) => !p.ok).length} kernels not answering`);
      await save('succeeded', null);
      await this.record('automation.upgrade', 'upgrade_succeeded', row.id, 'succeeded', { candidate: row.candidate }, 'automated');
    } catch (err) {
      const why = (err as Error).message;
      steps.push({ action: 'failed', ok: false, error: why, at: nowIso() });
      if (file) {
        try {
          await restore(this.db, this.config, file);
          steps.push({ action: 'restore', ok: true, file, at: nowIso() });
        } catch (e) {
          steps.push({ action: 'restore', ok: false, error: (e as Error).message, at: nowIso() });
        }
      }
      // The restored database has this row as it was at backup time: it is written again here.
      await save('failed', `${why}${file ? '; the backup was restored' : ''}`);
      await this.record('automation.upgrade', 'upgrade_failed', row.id, 'failed', { error: why, restored: !!file }, 'automated');
    }
  }

  async stop(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  private record(actor: string, action: string, id: string, result: 'succeeded' | 'failed', detail: Record<string, unknown>, source: 'manual' | 'automated' = 'manual') {
    return this.actions.record({ source, actor, action, target_type: 'upgrade', target_id: id, result, tenant_id: null, detail });
  }
}
