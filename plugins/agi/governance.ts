// Policy validation of proposed actions (role, blast radius, change windows, budget, origin)
// and the one approval store every waiting action goes to (/agi/approvals and
// /enterprise/human-ai/approvals are views of it).
import crypto from 'node:crypto';
import type { ActionLog } from '../../core/actions';
import type { Config } from '../../core/config';
import type { Db } from '../../core/db';
import { errorText, Forbidden, NotFound } from '../../core/errors';
import type { EventBus } from '../../core/events';
import type { Mesh } from '../../core/mesh/mesh';
import { pageOf } from '../../core/pagination';
import { roleAtLeast, type Caller } from '../../core/roles';
import { TenantScope } from '../../core/tenancy';
import type { InsightStore } from '../../core/contracts/insights';
import type { ActionKind, Approval, Approvals, ApprovalState, Executed, Governance, Origin, ProposedAction, RuleOutcome, Verdict } from '../../core/contracts/governance';
import { meshKinds, threadBudget } from './mesh-kinds';
import { alreadyDecided } from './errors';

const json = (v: unknown) => JSON.stringify(v);

function toApproval(r: Record<string, any>): Approval {
  return {
    ...r,
    action: JSON.parse(r.action),
    verdict: JSON.parse(r.verdict),
    chain_id: r.chain_id ?? null,
    decided_by: r.decided_by ?? null,
    decided_at: r.decided_at ?? null,
    comment: r.comment ?? null,
    result: r.result ? JSON.parse(r.result) : null,
    error: r.error ?? null,
  } as Approval;
}

/** Minutes since midnight UTC of "HH:MM". */
const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

export class GovernanceService implements Governance, Approvals {
  private readonly registry = new Map<string, ActionKind>();
  private readonly listeners: Array<(a: Approval) => void> = [];

  constructor(
    private readonly db: Db,
    private readonly mesh: Mesh,
    private readonly config: Config,
    private readonly events: EventBus,
    private readonly actions: ActionLog,
    private readonly insights: InsightStore,
    private readonly clock: { now(): Date },
  ) {
    for (const k of meshKinds(mesh)) this.register(k);
  }

  register(kind: ActionKind): void {
    this.registry.set(kind.kind, kind);
  }

  kinds(): ActionKind[] {
    return [...this.registry.values()].sort((a, b) => a.kind.localeCompare(b.kind));
  }

  private kindOf(kind: string): ActionKind {
    const k = this.registry.get(kind);
    if (!k) throw new NotFound(`Unknown action kind "${kind}"; known: ${[...this.registry.keys()].sort().join(', ')}`);
    return k;
  }

  async validate(caller: Caller, a: ProposedAction, origin: Origin): Promise<Verdict> {
    const kind = this.registry.get(a.kind);
    const rules: Verdict['rules'] = [];
    const add = (rule: Verdict['rules'][number]['rule'], outcome: RuleOutcome, detail: string) => rules.push({ rule, outcome, detail });
    if (!kind) {
      add('known_action', 'block', `"${a.kind}" is not a governed action; known: ${[...this.registry.keys()].sort().join(', ')}`);
      return { decision: 'block', rules, approver_role: 'admin' };
    }
    await kind.check?.(caller, a);
    add('known_action', 'allow', kind.summary);
    add('role', roleAtLeast(caller.role, kind.role) ? 'allow' : 'block', `${a.kind} needs role ${kind.role}; the caller is ${caller.role}`);

    const blast = kind.blast(a);
    const cfg = this.config.governance;
    if (!blast) add('blast_radius', 'allow', 'touches no node');
    else if (blast.active_after !== null && blast.active_after <= 0) add('blast_radius', 'block', `would leave no active node (touches ${blast.affected} of ${blast.of})`);
    else if (blast.affected / blast.of > cfg.maxBlastRadius) add('blast_radius', 'require_approval', `touches ${blast.affected} of ${blast.of} nodes (${Math.round((100 * blast.affected) / blast.of)}%), above governance.maxBlastRadius ${cfg.maxBlastRadius * 100}%`);
    else add('blast_radius', 'allow', `touches ${blast.affected} of ${blast.of} nodes; ${blast.active_after} active after`);

    const now = this.clock.now();
    if (!cfg.changeWindows.length) add('change_window', 'allow', 'no change windows configured (governance.changeWindows): changes may run at any time');
    else {
      const m = now.getUTCHours() * 60 + now.getUTCMinutes();
      const open = cfg.changeWindows.find((w) => w.days.includes(now.getUTCDay()) && m >= minutes(w.start) && m < minutes(w.end));
      if (open) add('change_window', 'allow', `inside the change window ${open.start}-${open.end} UTC`);
      else add('change_window', 'require_approval', `${now.toISOString()} is outside every change window (governance.changeWindows)`);
    }

    const threads = kind.threads?.(a) ?? 0;
    if (!threads) add('budget', 'allow', 'starts no threads');
    else {
      const left = threadBudget(this.mesh);
      add('budget', threads <= left ? 'allow' : 'block', `needs ${threads} more thread(s); ${left} left of mesh.maxThreads ${this.mesh.cfg.maxThreads}`);
    }

    if (origin.kind === 'human') add('origin', 'allow', 'asked for by a person');
    else if (cfg.autoApprove.includes(a.kind)) add('origin', 'allow', `proposed by agent ${origin.agent_id}; ${a.kind} is in governance.autoApprove`);
    else add('origin', 'require_approval', `proposed by agent ${origin.agent_id}: a person decides (governance.autoApprove does not list ${a.kind})`);

    const decision: RuleOutcome = rules.some((r) => r.outcome === 'block') ? 'block' : rules.some((r) => r.outcome === 'require_approval') ? 'require_approval' : 'allow';
    return { decision, rules, approver_role: kind.role };
  }

  async execute(caller: Caller, a: ProposedAction, origin: Origin, opts: { reason?: string; chain_id?: string | null } = {}): Promise<Executed> {
    const verdict = await this.validate(caller, a, origin);
    const originName = origin.kind === 'human' ? 'human' : `agent:${origin.agent_id}`;
    const record = (action: string, result: 'succeeded' | 'failed' | 'refused', detail: Record<string, unknown>) =>
      this.actions.record({ source: origin.kind === 'human' ? 'manual' : 'automated', actor: caller.id, action, target_type: 'governed_action', target_id: a.target, cause: opts.reason ?? null, result, detail: { kind: a.kind, ...detail }, tenant_id: caller.tenantId });
    if (verdict.decision === 'block') {
      await record('governance_block', 'refused', { rules: verdict.rules.filter((r) => r.outcome === 'block') });
      if (opts.chain_id) await this.insights.decide(opts.chain_id, { state: 'blocked', by: 'governance', at: this.clock.now().toISOString(), detail: verdict.rules });
      return { status: 'blocked', verdict, approval: null, result: null, error: null };
    }
    if (verdict.decision === 'require_approval') {
      const at = this.clock.now();
      const approval: Approval = {
        id: crypto.randomUUID(),
        tenant_id: caller.tenantId,
        action: a,
        summary: this.kindOf(a.kind).summary,
        state: 'pending',
        origin: originName,
        requested_by: caller.id,
        reason: opts.reason ?? '',
        verdict,
        chain_id: opts.chain_id ?? null,
        decided_by: null,
        decided_at: null,
        comment: null,
        result: null,
        error: null,
        expires_at: new Date(at.getTime() + this.config.governance.approvalTtlSeconds * 1000).toISOString(),
        created_at: at.toISOString(),
        updated_at: at.toISOString(),
      };
      await this.db('agi_approvals').insert({ ...approval, action: json(a), verdict: json(verdict), result: null });
      await record('request_approval', 'succeeded', { approval_id: approval.id });
      if (opts.chain_id) await this.insights.decide(opts.chain_id, { state: 'pending_approval', by: null, at: approval.created_at, approval_id: approval.id });
      this.events.publish('approval', { approval_id: approval.id, tenant_id: approval.tenant_id, state: 'pending', kind: a.kind, target: a.target });
      return { status: 'pending_approval', verdict, approval, result: null, error: null };
    }
    try {
      const result = await this.kindOf(a.kind).run(caller, a);
      if (opts.chain_id) await this.insights.decide(opts.chain_id, { state: 'applied', by: caller.id, at: this.clock.now().toISOString() });
      return { status: 'executed', verdict, approval: null, result: result ?? null, error: null };
    } catch (err) {
      if (opts.chain_id) await this.insights.decide(opts.chain_id, { state: 'failed', by: caller.id, at: this.clock.now().toISOString(), detail: errorText(err) });
      return { status: 'failed', verdict, approval: null, result: null, error: errorText(err) };
    }
  }

  // ---- approvals ----

  /** Pending approvals past their expiry become expired (checked whenever approvals are read). */
  private async expire(tenantId: string): Promise<void> {
    const now = this.clock.now().toISOString();
    const rows = await this.db('agi_approvals').where({ tenant_id: tenantId, state: 'pending' }).andWhere('expires_at', '<=', now).select('id', 'chain_id');
    if (!rows.length) return;
    await this.db('agi_approvals').whereIn('id', rows.map((r) => r.id)).andWhere('state', 'pending').update({ state: 'expired', updated_at: now });
    for (const r of rows) if (r.chain_id) await this.insights.decide(r.chain_id, { state: 'expired', by: null, at: now, approval_id: r.id });
  }

  async list(caller: Caller, f: { state?: ApprovalState; limit: number; cursor?: string }) {
    await this.expire(caller.tenantId);
    const q = new TenantScope(this.db, caller.tenantId).select('agi_approvals');
    if (f.state) q.where('state', f.state);
    const { items, next_cursor } = await pageOf(q, f.limit, f.cursor);
    return { items: items.map(toApproval), next_cursor };
  }

  async get(caller: Caller, id: string): Promise<Approval> {
    await this.expire(caller.tenantId);
    return toApproval(await new TenantScope(this.db, caller.tenantId).get('agi_approvals', { id }, 'Approval request'));
  }

  onDecided(fn: (a: Approval) => void): void {
    this.listeners.push(fn);
  }

  async decide(caller: Caller, id: string, decision: 'approve' | 'reject', comment: string | null = null): Promise<Approval> {
    const a = await this.get(caller, id);
    if (a.state !== 'pending') throw alreadyDecided(a.state);
    if (!roleAtLeast(caller.role, a.verdict.approver_role)) throw new Forbidden(`Deciding this request needs role ${a.verdict.approver_role}`);
    if (a.requested_by === caller.id) throw new Forbidden('A request cannot be decided by the person who made it');
    const at = this.clock.now().toISOString();
    // Claim the request: of two deciders at once, one wins and the other gets 409.
    const n = await this.db('agi_approvals').where({ id, tenant_id: caller.tenantId, state: 'pending' }).whereNull('decided_by').update({ decided_by: caller.id, decided_at: at, comment, updated_at: at });
    if (!n) throw alreadyDecided((await this.get(caller, id)).state);
    let state: ApprovalState = 'rejected';
    let result: unknown = null;
    let error: string | null = null;
    if (decision === 'approve') {
      try {
        const kind = this.kindOf(a.action.kind);
        result = (await kind.run(caller, a.action)) ?? null;
        state = 'executed';
      } catch (err) {
        state = 'failed';
        error = errorText(err);
      }
    }
    const done = this.clock.now().toISOString();
    await this.db('agi_approvals').where({ id }).update({ state, result: json(result), error, updated_at: done });
    await this.actions.record({ source: 'manual', actor: caller.id, action: decision === 'approve' ? 'approve_request' : 'reject_request', target_type: 'approval', target_id: id, cause: comment, result: state === 'failed' ? 'failed' : 'succeeded', detail: { kind: a.action.kind, target: a.action.target, state, error }, tenant_id: caller.tenantId });
    if (a.chain_id) await this.insights.decide(a.chain_id, { state: state === 'executed' ? 'applied' : state === 'failed' ? 'failed' : 'rejected', by: caller.id, at: done, approval_id: id, detail: error ?? undefined });
    const after = await this.get(caller, id);
    this.events.publish('approval', { approval_id: id, tenant_id: after.tenant_id, state, kind: a.action.kind, target: a.action.target });
    for (const fn of this.listeners) fn(after);
    return after;
  }
}
