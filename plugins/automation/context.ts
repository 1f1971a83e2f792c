import { billingRef } from '../../core/contracts/billing';
import { workflowsRef } from '../../core/contracts/workflows';
import { createServiceRef, optional, type Resolved } from '../../core/plugin';
import { accountsRef } from '../../core/contracts/accounts';
import { core } from '../../core/services';
import { Certificates } from './certs/service';
import { Probes } from './checks/probes';
import { Scheduler } from './checks/scheduler';
import { OnboardingKeys } from './customers/keys';
import { CustomerRecords } from './customers/service';
import { Provisioner } from './customers/provision';
import { QuotaEnforcer } from './customers/quotas';
import { Rolling } from './deploy/rolling';
import { Deployments } from './deploy/service';
import { HttpsListener } from './https/listener';
import { HttpsMonitor } from './https/monitor';
import { scheduledBackup } from './upgrade/backup';
import { Upgrades } from './upgrade/service';

export const automationDeps = {
  db: core.db, config: core.config, log: core.log, events: core.events, actions: core.actions, mesh: core.mesh,
  health: core.health, lifecycle: core.lifecycle, accounts: accountsRef, clock: core.clock, workflows: optional(workflowsRef), leases: core.leases,
  limits: core.limits, billing: optional(billingRef),
};

/** Everything the automation routes use, made once per host at plugin start. */
export class Automation {
  readonly now: () => Date;
  readonly certs: Certificates;
  readonly https: HttpsListener;
  readonly monitor: HttpsMonitor;
  readonly deployments: Deployments;
  readonly probes: Probes;
  readonly scheduler: Scheduler;
  readonly customers: CustomerRecords;
  readonly upgrades: Upgrades;
  readonly quotas: QuotaEnforcer;

  constructor(readonly services: Resolved<typeof automationDeps>) {
    const { db, config, actions, events, log, mesh, health, lifecycle, accounts, workflows, clock, limits, billing } = services;
    this.now = () => clock.now();
    this.certs = new Certificates(db, config, actions, events, log, this.now);
    this.https = new HttpsListener(db, config, lifecycle, this.certs, log);
    this.monitor = new HttpsMonitor(db, config, this.https, this.certs, this.now);
    this.deployments = new Deployments(db, mesh, actions, events, log, config, this.certs.sealer, services.leases);
    this.probes = new Probes(db, config, mesh, health, () => this.certs.ca.certificatePem());
    this.quotas = new QuotaEnforcer(db, limits);
    const keys = new OnboardingKeys(db, this.certs.sealer, billing);
    this.customers = new CustomerRecords(db, config, accounts, workflows, mesh, actions, events, log, new Provisioner(db, config, accounts, workflows, mesh, this.quotas, keys), this.quotas, keys);
    this.upgrades = new Upgrades(db, config, mesh, new Rolling(mesh, config.automation.deployments), actions, events, log);
    this.scheduler = new Scheduler(db, config, log, {
      health_check: async () => {
        const r = await this.probes.run(this.probes.defaultTargets());
        return { ok: r.every((x) => x.ok), summary: { targets: r.length, failing: r.filter((x) => !x.ok).map((x) => x.target) } };
      },
      https_check: async () => {
        const r = await this.monitor.checkAll();
        return { ok: r.every((x) => x.ok && x.authorized), summary: { targets: r.length, failing: r.filter((x) => !(x.ok && x.authorized)).map((x) => x.target) } };
      },
      certificate_renewal: async () => {
        const r = await this.certs.renewDue();
        return { ok: r.failed.length === 0, summary: r };
      },
      database_backup: async () => ({ ok: true, summary: await scheduledBackup(db, config, this.now(), config.automation.scheduler.backupKeep) }),
    }, services.leases);
  }

  async start(): Promise<void> {
    await this.quotas.start();
    this.services.mesh.admitters.push(this.quotas.admit);
    await this.scheduler.start();
    await this.deployments.start();
    // HTTPS that was enabled before a restart comes back once the HTTP app is built.
    const timer = setInterval(() => {
      if (this.services.lifecycle.state === 'starting') return;
      clearInterval(timer);
      if (this.services.lifecycle.state === 'running') void this.https.sync().catch((err: Error) => this.services.log.warn({ err: err.message }, 'HTTPS could not be restored'));
    }, 50);
    timer.unref();
  }

  async stop(): Promise<void> {
    const i = this.services.mesh.admitters.indexOf(this.quotas.admit);
    if (i >= 0) this.services.mesh.admitters.splice(i, 1);
    this.quotas.stop();
    await this.scheduler.stop();
    await Promise.all([this.deployments.stop(), this.customers.stop(), this.upgrades.stop()]);
    await this.https.disable();
  }
}

/** The automation engine, a service of this plugin for its own handlers (not shared). */
export const automationRef = createServiceRef<Automation>('automation.engine');
