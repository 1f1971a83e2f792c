import crypto from 'node:crypto';
import { Conflict } from '../../core/errors';
import type { AccountsService } from '../../core/contracts/accounts';
import type { ChaosRuns } from '../../core/contracts/chaos';
import type { SecurityService } from '../../core/contracts/security';
import type { Caller } from '../../core/roles';
import type { Services } from '../../core/services';
import { attack } from './isolation';
import { seedScenarios, StressTests } from './stress';
import { Runs, type Run } from './store';

type D = Pick<Services, 'db' | 'mesh' | 'auth' | 'events' | 'log'> & { chaos: ChaosRuns; security: SecurityService | null; accounts: AccountsService };

/** The group's long operations: stress tests, and attack simulations with their findings. */
export class Stability {
  readonly runs: Runs;
  readonly stress: StressTests;
  private simulating = false;

  constructor(private readonly d: D) {
    this.runs = new Runs(d.db, d.events);
    this.stress = new StressTests(d, this.runs);
  }

  async start(): Promise<void> {
    await seedScenarios(this.d);
    // Runs a stopped process left behind cannot finish any more. Only old ones: on a shared
    // database another host may be running a recent one (no run lasts 10 minutes).
    const stale = new Date(Date.now() - 600_000).toISOString();
    await this.d.db('stability_runs').whereIn('state', ['queued', 'running']).andWhere('created_at', '<', stale).update({ state: 'failed', error: 'the host that ran it stopped', finished_at: new Date().toISOString() });
  }

  stop(): void {
    this.stress.stop();
  }

  async simulate(caller: Caller, base: string): Promise<Run> {
    if (this.simulating) throw new Conflict('an attack simulation is already running', 'SIMULATION_RUNNING');
    const run = await this.runs.create('attack_simulation', caller.tenantId, { base: 'loopback' }, caller.id);
    this.simulating = true;
    void (async () => {
      const running = await this.runs.move(run, 'running');
      try {
        const report = await attack(this.d.db, this.d.auth, this.d.accounts, base, () => undefined);
        await this.recordFindings(run.id, report.findings);
        await this.runs.move(running, 'succeeded', { result: report });
      } catch (err) {
        this.d.log.warn({ err: (err as Error).message }, 'attack simulation failed');
        await this.runs.move(running, 'failed', { error: (err as Error).message }).catch(() => undefined);
      } finally {
        this.simulating = false;
      }
    })();
    return run;
  }

  /**
   * Leaks are critical, server errors high. Kept with the run in this group's store; a leak is
   * also a security event (category `stability.isolation_leak`, one per route), which the
   * security plugin's rule turns into a critical finding, when that plugin is installed.
   */
  private async recordFindings(runId: string, findings: Array<{ kind: string; method: string; path: string; verdict: string; evidence: string | null; status: number }>) {
    const now = new Date().toISOString();
    const rows = findings.map((f) => ({ id: crypto.randomUUID(), severity: f.verdict === 'leak' ? 'critical' : 'high', kind: f.verdict === 'leak' ? `tenant_isolation_${f.kind}` : 'server_error', run_id: runId, title: `${f.verdict === 'leak' ? 'Tenant isolation leak' : 'Server error'}: ${f.method} ${f.path} answered ${f.status}`, evidence: f.evidence ?? '', created_at: now }));
    for (let i = 0; i < rows.length; i += 100) await this.d.db('stability_findings').insert(rows.slice(i, i + 100));
    for (const r of rows) if (r.severity === 'critical') this.d.events.publish('security_finding', { id: r.id, severity: r.severity, kind: r.kind, title: r.title, source: 'stability.attack_simulation', run_id: runId, tenant_id: null });
    if (!this.d.security) return;
    for (const [i, f] of findings.entries()) {
      if (f.verdict !== 'leak') continue;
      await this.d.security.record({
        tenant_id: null, source: 'stability', category: 'stability.isolation_leak', severity: 'critical',
        actor: `${f.method} ${f.path}`, attributes: { run_id: runId, finding_id: rows[i].id, kind: f.kind, status: f.status, evidence: f.evidence },
      });
    }
  }
}
