import crypto from 'node:crypto';
import type { ActionLog } from '../../../core/actions';
import type { AccountsService } from '../../../core/contracts/accounts';
import type { Workflows } from '../../../core/contracts/workflows';
import type { Config } from '../../../core/config';
import { nowIso, type Db } from '../../../core/db';
import type { EventBus } from '../../../core/events';
import { Conflict, invalid, NotFound } from '../../../core/errors';
import type { Logger } from '../../../core/logger';
import type { Mesh } from '../../../core/mesh/mesh';
import type { Caller } from '../../../core/roles';
import { coded, StateConflict } from '../errors';
import { deleteTenant, exportTenant, runningWork, tenantTables } from './offboard';
import { pendingSteps, type ProvisionSpec, type Provisioner, type StepResult } from './provision';
import type { QuotaEnforcer } from './quotas';
import type { OnboardingKeys } from './keys';

export type Kind = 'customer' | 'flow' | 'pov';

export interface RecordRow {
  id: string;
  tenant_id: string;
  kind: Kind;
  customer_tenant: string;
  name: string;
  state: string;
  spec: string;
  steps: string;
  reason: string | null;
  created_by: string;
  idempotency_key?: string | null;
  created_at: string;
  updated_at: string;
}

export function recordView(r: RecordRow) {
  return {
    id: r.id,
    kind: r.kind,
    customer_tenant: r.customer_tenant,
    name: r.name,
    state: r.state,
    spec: JSON.parse(r.spec) as ProvisionSpec & Record<string, unknown>,
    steps: JSON.parse(r.steps) as StepResult[],
    reason: r.reason,
    created_by: r.created_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/**
 * Customers (onboarded at once), onboarding flows and proof-of-value environments (run in the
 * background, 202): each is a record of what was asked (spec) and of each step's outcome.
 * States: customer onboarded | failed | offboarded; flow and pov created -> queued -> running
 * -> succeeded | failed.
 */
export class CustomerRecords {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    readonly db: Db,
    private readonly config: Config,
    private readonly accounts: AccountsService,
    private readonly workflows: Workflows | null,
    private readonly mesh: Mesh,
    private readonly actions: ActionLog,
    private readonly events: EventBus,
    private readonly log: Logger,
    private readonly provisioner: Provisioner,
    private readonly quotas: QuotaEnforcer,
    readonly keys: OnboardingKeys,
  ) {}

  async get(kind: Kind, id: string): Promise<RecordRow> {
    const row = await this.db<RecordRow>('automation_customers').where({ id, kind }).first();
    if (!row) throw new NotFound(`${kind === 'pov' ? 'Proof-of-value deployment' : kind === 'flow' ? 'Onboarding flow' : 'Customer'} not found`);
    return row;
  }

  /** Refuses (422/409) what would fail half-way: unknown plan or kernel, a taken tenant id or e-mail. */
  async check(spec: ProvisionSpec, fresh: boolean): Promise<void> {
    if (!this.config.plans[spec.plan]) throw invalid(['body', 'plan'], `Unknown plan "${spec.plan}"; known: ${Object.keys(this.config.plans).join(', ')}`);
    const kernels = new Set(this.mesh.kernels().map((k) => k.id));
    for (const d of Object.keys(spec.kernel_quotas)) if (!kernels.has(d)) throw invalid(['body', 'kernel_quotas', d], `Unknown kernel "${d}"`);
    if (spec.first_task) {
      const issues = kernels.has(spec.first_task.kernel) ? this.mesh.validateInput(spec.first_task.kernel, spec.first_task.task, spec.first_task.input) : [{ loc: [], msg: `Unknown kernel "${spec.first_task.kernel}"`, type: 'value_error' }];
      if (issues.length) throw invalid(['body', 'first_task'], issues.map((i) => i.msg).join('; '));
    }
    if (!fresh) return;
    if (await this.db('tenants').where({ id: spec.tenant_id }).first('id')) throw coded(409, 'TENANT_EXISTS', `Tenant "${spec.tenant_id}" already exists`);
    if (await this.db('users').where({ email: spec.admin_email.toLowerCase() }).first('id')) throw coded(409, 'EMAIL_TAKEN', `A user with e-mail ${spec.admin_email} already exists`);
  }

  async create(caller: Caller, kind: Kind, spec: ProvisionSpec, state: string, extra: Record<string, unknown> = {}, idempotencyKey: string | null = null): Promise<RecordRow> {
    const at = nowIso();
    const row: RecordRow = {
      id: crypto.randomUUID(), tenant_id: caller.tenantId, kind, customer_tenant: spec.tenant_id, name: spec.name, state,
      spec: JSON.stringify({ ...spec, ...extra }), steps: JSON.stringify(pendingSteps(spec.steps)), reason: null, created_by: caller.id, idempotency_key: idempotencyKey, created_at: at, updated_at: at,
    };
    await this.db('automation_customers').insert(row);
    await this.record(caller.id, `create_${kind}`, row, 'succeeded', { customer_tenant: spec.tenant_id });
    return row;
  }

  private async saveSteps(id: string, steps: StepResult[]): Promise<void> {
    await this.db('automation_customers').where({ id }).update({ steps: JSON.stringify(steps), updated_at: nowIso() });
  }

  private async setState(row: RecordRow, from: string[], state: string, reason: string | null = null): Promise<boolean> {
    const n = await this.db('automation_customers').where({ id: row.id }).whereIn('state', from).update({ state, reason, updated_at: nowIso() });
    if (n) this.events.publish(`${row.kind}_status`, { id: row.id, customer_tenant: row.customer_tenant, state, reason });
    return n === 1;
  }

  /** Customer onboarding: the steps run now; the answer has every step's outcome. */
  async onboard(caller: Caller, spec: ProvisionSpec, idempotencyKey: string | null = null): Promise<RecordRow> {
    if (idempotencyKey) {
      const seen = await this.db<RecordRow>('automation_customers').where({ tenant_id: caller.tenantId, idempotency_key: idempotencyKey }).first();
      if (seen) return seen;
    }
    await this.check(spec, true);
    const row = await this.create(caller, 'customer', spec, 'onboarding', {}, idempotencyKey);
    const r = await this.provisioner.run(spec, (steps) => this.saveSteps(row.id, steps));
    const failed = r.steps.find((s) => s.state === 'failed');
    await this.setState(row, ['onboarding'], r.ok ? 'onboarded' : 'failed', failed ? `step ${failed.name} failed: ${String(failed.detail.error)}` : null);
    await this.record(caller.id, 'onboard_customer', row, r.ok ? 'succeeded' : 'failed', { steps: r.steps.map((s) => `${s.name}:${s.state}`) });
    return this.get('customer', row.id);
  }

  /** Starts a flow or a proof-of-value deployment in the background (202). */
  async start(caller: Caller, row: RecordRow, after?: (row: RecordRow) => Promise<void>): Promise<RecordRow> {
    const allowed = row.state === 'created' || row.state === 'failed' ? ['execute'] : [];
    if (!allowed.length) throw new StateConflict(row.state, allowed, `A ${row.state} ${row.kind === 'pov' ? 'deployment' : 'flow'} cannot be executed`);
    if (!(await this.setState(row, ['created', 'failed'], 'queued'))) {
      const now = await this.get(row.kind, row.id);
      throw new StateConflict(now.state, []);
    }
    await this.record(caller.id, `execute_${row.kind}`, row, 'succeeded', {});
    const queued = await this.get(row.kind, row.id);
    const work = this.runInBackground(row, after).catch((err: Error) => this.log.error({ err: err.message, id: row.id }, 'provisioning failed'));
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
    return queued;
  }

  private async runInBackground(row: RecordRow, after?: (row: RecordRow) => Promise<void>): Promise<void> {
    await this.setState(row, ['queued'], 'running');
    const spec = JSON.parse(row.spec) as ProvisionSpec;
    const r = await this.provisioner.run(spec, (steps) => this.saveSteps(row.id, steps));
    const failed = r.steps.find((s) => s.state === 'failed');
    if (r.ok && after) await after(row);
    await this.setState(row, ['running'], r.ok ? 'succeeded' : 'failed', failed ? `step ${failed.name} failed: ${String(failed.detail.error)}` : null);
    await this.record('automation.onboarding', `${row.kind}_finished`, row, r.ok ? 'succeeded' : 'failed', { steps: r.steps.map((s) => `${s.name}:${s.state}`) }, 'automated');
  }

  /** Every step's result checked again against the live state. */
  async validate(caller: Caller, row: RecordRow) {
    const spec = JSON.parse(row.spec) as ProvisionSpec;
    const steps = JSON.parse(row.steps) as StepResult[];
    const checks: Array<{ step: string; ok: boolean; evidence: string }> = [];
    const tenant = await this.db('tenants').where({ id: row.customer_tenant }).first();
    for (const s of steps) {
      switch (s.name) {
        case 'tenant':
          checks.push({ step: s.name, ok: !!tenant && tenant.plan === spec.plan, evidence: tenant ? `tenant ${tenant.id} exists on plan ${tenant.plan}` : `tenant ${row.customer_tenant} does not exist` });
          break;
        case 'admin_user': {
          const u = await this.db('users').where({ tenant_id: row.customer_tenant, email: spec.admin_email.toLowerCase() }).first('id', 'role');
          checks.push({ step: s.name, ok: !!u, evidence: u ? `user ${u.id} (${u.role}) exists in the tenant` : `no user ${spec.admin_email} in the tenant` });
          break;
        }
        case 'api_key': {
          const keyId = s.state === 'succeeded' ? String(s.detail.key_id) : null;
          const state = keyId ? await this.keys.state(row.customer_tenant, keyId) : null;
          checks.push(keyId
            ? { step: s.name, ok: state === 'active', evidence: `API key ${keyId} is ${state ?? 'gone'}` }
            : { step: s.name, ok: s.state === 'not_configured' && !this.keys.configured, evidence: this.keys.configured ? `the step ended ${s.state}` : 'no API key service is installed; nothing to check' });
          break;
        }
        case 'kernel_quotas': {
          const rows = await this.db('automation_quotas').where({ customer_tenant: row.customer_tenant });
          const want = Object.keys(spec.kernel_quotas);
          const have = new Set(rows.map((q) => q.domain as string));
          const missing = want.filter((d) => !have.has(d));
          checks.push({ step: s.name, ok: missing.length === 0, evidence: missing.length ? `no quota for ${missing.join(', ')}` : `quotas for ${want.join(', ') || 'no kernels'}` });
          break;
        }
        case 'starter_workflows': {
          const ids = (s.detail.workflow_ids as string[] | undefined) ?? [];
          const reader: Caller = { kind: 'user', id: 'automation', tenantId: row.customer_tenant, role: 'viewer' };
          const n = this.workflows ? (await this.workflows.find(reader, { ids })).length : 0;
          checks.push({ step: s.name, ok: s.state === 'skipped' || (ids.length > 0 && n === ids.length), evidence: s.state === 'skipped' ? String(s.detail.reason) : `${n} of ${ids.length} starter workflows exist` });
          break;
        }
        case 'first_task': {
          const ok = await this.db('task_outcomes').where({ tenant_id: row.customer_tenant, ok: true }).count<{ n: number | string }[]>('* as n').first();
          const n = Number(ok?.n ?? 0);
          checks.push({ step: s.name, ok: s.state === 'skipped' || n > 0, evidence: `${n} successful tasks recorded for the tenant` });
          break;
        }
      }
    }
    const valid = checks.every((c) => c.ok);
    await this.record(caller.id, 'validate_customer', row, valid ? 'succeeded' : 'failed', { checks });
    return { customer_id: row.id, customer_tenant: row.customer_tenant, valid, checks, checked_at: nowIso() };
  }

  /** Offboarding: refused while the tenant has running work; the export comes with the answer. */
  async offboard(caller: Caller, row: RecordRow, dryRun: boolean) {
    if (row.state === 'offboarded') throw new StateConflict(row.state, [], 'The customer is already offboarded');
    const busy = await runningWork(this.db, row.customer_tenant);
    if (Object.keys(busy).length) throw coded(409, 'RUNNING_WORK', `The tenant has running work: ${Object.entries(busy).map(([k, n]) => `${n} ${k}`).join(', ')}`, { running: busy });
    if (row.customer_tenant === caller.tenantId) throw new Conflict('The caller\'s own tenant cannot be offboarded');
    const tables = await tenantTables(this.db);
    const data = await exportTenant(this.db, tables, row.customer_tenant);
    if (dryRun) return { customer_id: row.id, state: row.state, dry_run: true, export: data, deleted: {} };
    const deleted = await deleteTenant(this.db, this.accounts, tables, row.customer_tenant);
    await this.db('automation_quotas').where({ customer_tenant: row.customer_tenant }).delete();
    await this.quotas.reload();
    await this.setState(row, [row.state], 'offboarded', `offboarded by ${caller.id}`);
    await this.record(caller.id, 'offboard_customer', row, 'succeeded', { deleted });
    return { customer_id: row.id, state: 'offboarded', dry_run: false, export: data, deleted };
  }

  async stop(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  record(actor: string, action: string, row: RecordRow, result: 'succeeded' | 'failed', detail: Record<string, unknown>, source: 'manual' | 'automated' = 'manual') {
    return this.actions.record({ source, actor, action, target_type: row.kind, target_id: row.id, result, tenant_id: row.tenant_id, detail: { customer_tenant: row.customer_tenant, ...detail } });
  }
}
