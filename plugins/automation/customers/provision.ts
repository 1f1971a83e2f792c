import crypto from 'node:crypto';
import type { AccountsService } from '../../../core/contracts/accounts';
import type { Config } from '../../../core/config';
import type { Workflows } from '../../../core/contracts/workflows';
import { HttpError } from '../../../core/errors';
import type { Caller } from '../../../core/roles';
import { nowIso, type Db } from '../../../core/db';
import type { Mesh } from '../../../core/mesh/mesh';
import type { OnboardingKeys } from './keys';
import type { QuotaEnforcer } from './quotas';
import type { StarterWorkflow, StepName } from './templates';

/** What a tenant is provisioned with (customers, onboarding flows, proof-of-value environments). */
export interface ProvisionSpec {
  tenant_id: string;
  name: string;
  plan: string;
  admin_email: string;
  admin_name: string;
  kernel_quotas: Record<string, { max_concurrent: number; tasks_per_minute: number }>;
  starter_workflows: StarterWorkflow[];
  first_task: { kernel: string; task: string; input: unknown } | null;
  steps: StepName[];
}

export interface StepResult {
  name: StepName;
  state: 'pending' | 'succeeded' | 'failed' | 'skipped' | 'not_configured';
  detail: Record<string, unknown>;
  at: string | null;
}

export const pendingSteps = (names: StepName[]): StepResult[] => names.map((name) => ({ name, state: 'pending', detail: {}, at: null }));

/**
 * Runs the provisioning steps in order, each one's outcome kept. A failed step stops the run
 * (the steps after it stay pending). The first user is an operator of the new tenant (the
 * highest role bound to one tenant; `admin` is the platform's cross-tenant role) and is
 * invited by mail with a single-use password token.
 */
export class Provisioner {
  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly accounts: AccountsService,
    private readonly workflows: Workflows | null,
    private readonly mesh: Mesh,
    private readonly quotas: QuotaEnforcer,
    private readonly keys: OnboardingKeys,
  ) {}

  async run(spec: ProvisionSpec, onStep: (steps: StepResult[]) => Promise<void>): Promise<{ ok: boolean; steps: StepResult[] }> {
    const steps = pendingSteps(spec.steps);
    let user: { id: string; email: string } | null = (await this.db('users').where({ email: spec.admin_email.toLowerCase(), tenant_id: spec.tenant_id }).first('id', 'email')) ?? null;
    for (const s of steps) {
      try {
        const r = await this.step(s.name, spec, user);
        if (r.user) user = r.user;
        Object.assign(s, { state: r.state, detail: r.detail, at: nowIso() });
      } catch (err) {
        Object.assign(s, { state: 'failed', detail: { error: (err as Error).message }, at: nowIso() });
      }
      await onStep(steps);
      if (s.state === 'failed') return { ok: false, steps };
    }
    return { ok: true, steps };
  }

  private async step(name: StepName, spec: ProvisionSpec, user: { id: string; email: string } | null): Promise<{ state: StepResult['state']; detail: Record<string, unknown>; user?: { id: string; email: string } }> {
    switch (name) {
      case 'tenant': {
        const existing = await this.db('tenants').where({ id: spec.tenant_id }).first();
        if (!existing) await this.db('tenants').insert({ id: spec.tenant_id, name: spec.name, plan: spec.plan, domains: '[]', created_at: nowIso() });
        return { state: 'succeeded', detail: { tenant_id: spec.tenant_id, plan: spec.plan, created: !existing } };
      }
      case 'admin_user': {
        if (user) return { state: 'succeeded', detail: { user_id: user.id, email: user.email, created: false } };
        const made = await this.accounts.createUser({ email: spec.admin_email, name: spec.admin_name, role: 'operator', tenantId: spec.tenant_id, password: `${crypto.randomBytes(24).toString('base64url')}!1` });
        // The invitation: a single-use token by mail with which the user sets a password.
        this.accounts.requestReset(made.email);
        await this.accounts.settle();
        const mail = await this.db('mail_outbox').where({ tenant_id: spec.tenant_id }).orderBy('created_at', 'desc').first('id');
        return { state: 'succeeded', detail: { user_id: made.id, email: made.email, role: 'operator', invitation_mail_id: mail?.id ?? null, created: true }, user: { id: made.id, email: made.email } };
      }
      case 'api_key': {
        if (!this.keys.configured) return { state: 'not_configured', detail: { code: 'NOT_CONFIGURED', detail: 'no API key service is installed (service ref "monetization.billing"); load the monetization plugin to make keys' } };
        const existing = await this.db('automation_key_reveals').where({ tenant_id: spec.tenant_id }).orderBy('created_at').first('key_id');
        if (existing) return { state: 'succeeded', detail: { key_id: existing.key_id, reveal: `/automation/keys/${existing.key_id}/reveal`, created: false } };
        const made = await this.keys.create(spec.tenant_id, spec.name, user?.id ?? 'automation');
        return { state: 'succeeded', detail: { ...made, scopes: ['execute', 'read'], created: true } };
      }
      case 'kernel_quotas': {
        const rows = Object.entries(spec.kernel_quotas).map(([domain, q]) => ({ customer_tenant: spec.tenant_id, domain, max_concurrent: q.max_concurrent, tasks_per_minute: q.tasks_per_minute, created_at: nowIso() }));
        if (rows.length) await this.db('automation_quotas').insert(rows).onConflict(['customer_tenant', 'domain']).merge();
        await this.quotas.reload();
        return { state: 'succeeded', detail: { quotas: spec.kernel_quotas } };
      }
      case 'starter_workflows': {
        if (!spec.starter_workflows.length) return { state: 'skipped', detail: { reason: 'no starter workflows asked' } };
        if (!user) throw new Error('the tenant has no user to own its workflows');
        if (!this.workflows) return { state: 'skipped', detail: { reason: 'the workflows plugin is not installed' } };
        const owner: Caller = { kind: 'user', id: user.id, tenantId: spec.tenant_id, role: 'operator', email: user.email };
        const made: string[] = [];
        for (const wf of spec.starter_workflows) {
          try {
            made.push((await this.workflows.create(owner, wf.name, wf.steps)).id);
          } catch (err) {
            if (err instanceof HttpError) throw new Error(`creating workflow "${wf.name}" answered ${err.status}: ${JSON.stringify({ detail: err.detail })}`);
            throw err;
          }
        }
        return { state: 'succeeded', detail: { workflow_ids: made } };
      }
      case 'first_task': {
        if (!spec.first_task) return { state: 'skipped', detail: { reason: 'no first task asked' } };
        if (!user) throw new Error('the tenant has no user to run its first task');
        const { kernel, task, input } = spec.first_task;
        const t0 = performance.now();
        const output = await this.mesh.run(kernel, task, input, { caller: { kind: 'user', id: user.id, tenantId: spec.tenant_id, role: 'operator' } });
        return { state: 'succeeded', detail: { kernel, task, run_ms: Math.round((performance.now() - t0) * 1000) / 1000, output } };
      }
    }
  }
}
