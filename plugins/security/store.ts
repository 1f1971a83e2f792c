import crypto from 'node:crypto';
import type { ActionLog } from '../../core/actions';
import type { Finding, NewSecurityAction, NewSecurityEvent, SecurityAction, SecurityEvent } from '../../core/contracts/security';
import type { Db } from '../../core/db';
import type { EventBus } from '../../core/events';
import type { Logger } from '../../core/logger';
import { rulesFor, type Rule } from './rules';

/** A finding keeps at most this many evidence event ids (the first ones and the latest). */
const MAX_EVIDENCE = 200;

type Row = Record<string, any>;

export function eventOf(r: Row): SecurityEvent {
  return { ...r, attributes: JSON.parse(r.attributes) } as SecurityEvent;
}
export function findingOf(r: Row): Finding {
  return { ...r, rule_version: Number(r.rule_version), evidence: JSON.parse(r.evidence) } as Finding;
}
export function actionOf(r: Row): SecurityAction {
  return { ...r, undoable: Boolean(r.undoable), detail: JSON.parse(r.detail) } as SecurityAction;
}

/** Answers a rule's response for a finding (see responses.ts); resolves the finding when it succeeded. */
export type RuleResponder = (rule: Rule, finding: Finding, trigger: SecurityEvent) => Promise<SecurityAction | null>;

/**
 * Events, findings and actions. Rule evaluation runs one event at a time (a queue), so that
 * two events of one burst cannot open two findings for the same subject.
 */
export class SecurityStore {
  private queue: Promise<unknown> = Promise.resolve();
  /** Set by the plugin once the responder (which needs core services) is built. */
  responder: RuleResponder | null = null;

  constructor(
    private readonly db: Db,
    private readonly events: EventBus,
    private readonly actions: ActionLog,
    private readonly log: Logger,
    private readonly now: () => Date,
  ) {}

  private iso(): string {
    return this.now().toISOString();
  }

  async record(e: NewSecurityEvent): Promise<SecurityEvent> {
    const event: SecurityEvent = {
      id: crypto.randomUUID(),
      tenant_id: e.tenant_id,
      source: e.source,
      category: e.category,
      severity: e.severity,
      actor: e.actor ?? null,
      address: e.address ?? null,
      kernel_id: e.kernel_id ?? null,
      attributes: e.attributes ?? {},
      created_at: this.iso(),
    };
    await this.db('security_events').insert({ ...event, attributes: JSON.stringify(event.attributes) });
    this.events.publish('security_event', { id: event.id, tenant_id: event.tenant_id, category: event.category, severity: event.severity });
    const evaluation = this.queue.then(() => this.evaluate(event));
    this.queue = evaluation.catch((err: Error) => this.log.error({ err: err.message }, 'security rule evaluation failed'));
    await this.queue;
    return event;
  }

  /** Waits for rule evaluation (and responses) queued so far. */
  settled(): Promise<unknown> {
    return this.queue;
  }

  private async evaluate(e: SecurityEvent): Promise<void> {
    for (const { rule, subject } of rulesFor(e)) {
      const since = new Date(Date.parse(e.created_at) - rule.window_seconds * 1000).toISOString();
      const q = this.db('security_events').whereIn('category', rule.categories).where(rule.group_by, subject).where('created_at', '>=', since);
      if (e.tenant_id === null) q.whereNull('tenant_id');
      else q.where('tenant_id', e.tenant_id);
      const hits: Array<{ id: string; created_at: string; severity: string }> = await q.orderBy('created_at').limit(MAX_EVIDENCE).select('id', 'created_at', 'severity');
      if (hits.length < rule.threshold) continue;
      await this.raise(rule, subject, e, hits);
    }
  }

  private async raise(rule: Rule, subject: string, e: SecurityEvent, hits: Array<{ id: string; created_at: string }>): Promise<void> {
    const now = this.iso();
    const open = this.db('security_findings').where({ rule_id: rule.id, subject }).whereIn('state', ['open', 'acknowledged']);
    if (e.tenant_id === null) open.whereNull('tenant_id');
    else open.where('tenant_id', e.tenant_id);
    const existing = await open.first();
    if (existing) {
      const evidence: string[] = JSON.parse(existing.evidence);
      if (!evidence.includes(e.id)) evidence.push(e.id);
      const kept = evidence.length > MAX_EVIDENCE ? [...evidence.slice(0, MAX_EVIDENCE / 2), ...evidence.slice(-MAX_EVIDENCE / 2)] : evidence;
      await this.db('security_findings').where({ id: existing.id }).update({ evidence: JSON.stringify(kept), updated_at: now });
      return;
    }
    const finding: Finding = {
      id: crypto.randomUUID(),
      tenant_id: e.tenant_id,
      rule_id: rule.id,
      rule_version: rule.version,
      title: rule.title,
      severity: rule.severity,
      subject,
      state: 'open',
      evidence: hits.map((h) => h.id),
      first_evidence_at: hits[0].created_at,
      created_at: now,
      updated_at: now,
      acknowledged_at: null,
      resolved_at: null,
      resolved_by: null,
    };
    await this.db('security_findings').insert({ ...finding, evidence: JSON.stringify(finding.evidence) });
    this.events.publish('security_finding', { id: finding.id, tenant_id: finding.tenant_id, rule_id: rule.id, severity: rule.severity, state: 'open' });
    if (!rule.response || !this.responder) return;
    const action = await this.responder(rule, finding, e);
    if (action?.result === 'succeeded') await this.transition(finding.id, 'resolved', action.id);
  }

  /** open → acknowledged → resolved (open → resolved allowed); `by` is the resolving action or user. */
  async transition(id: string, to: 'acknowledged' | 'resolved', by: string): Promise<Finding> {
    const now = this.iso();
    const patch: Row = { state: to, updated_at: now };
    if (to === 'acknowledged') patch.acknowledged_at = now;
    else {
      patch.resolved_at = now;
      patch.resolved_by = by;
    }
    await this.db('security_findings').where({ id }).update(patch);
    const row = await this.db('security_findings').where({ id }).first();
    this.events.publish('security_finding', { id, tenant_id: row.tenant_id, rule_id: row.rule_id, severity: row.severity, state: to });
    return findingOf(row);
  }

  async recordAction(a: NewSecurityAction): Promise<SecurityAction> {
    const action: SecurityAction = {
      id: crypto.randomUUID(),
      tenant_id: a.tenant_id,
      action: a.action,
      target_type: a.target_type,
      target_id: a.target_id,
      trigger: a.trigger,
      finding_id: a.finding_id ?? null,
      actor: a.actor,
      result: a.result,
      detail: a.detail ?? {},
      undoable: Boolean(a.undoable) && a.result === 'succeeded',
      undone_at: null,
      created_at: this.iso(),
    };
    await this.db('security_actions').insert({ ...action, detail: JSON.stringify(action.detail) });
    await this.actions.record({
      source: a.trigger === 'rule' ? 'automated' : 'manual',
      actor: a.actor,
      action: a.action,
      target_type: a.target_type,
      target_id: a.target_id,
      cause: a.finding_id ?? null,
      result: a.result,
      detail: { security_action_id: action.id, trigger: a.trigger, ...action.detail },
      tenant_id: a.tenant_id,
    });
    return action;
  }

  async markUndone(actionId: string, _by: string): Promise<void> {
    await this.db('security_actions').where({ id: actionId }).update({ undone_at: this.iso() });
  }

  async activeFindings(tenantId: string, limit: number): Promise<Finding[]> {
    const rows = await this.db('security_findings').where({ tenant_id: tenantId }).whereIn('state', ['open', 'acknowledged']).orderBy('created_at', 'desc').limit(limit);
    return rows.map(findingOf);
  }

  async recentEvents(tenantId: string, categoryPrefix: string, sinceIso: string, limit: number): Promise<SecurityEvent[]> {
    const rows = await this.db('security_events')
      .where({ tenant_id: tenantId })
      .where('category', 'like', `${categoryPrefix}%`)
      .where('created_at', '>=', sinceIso)
      .orderBy('created_at', 'desc')
      .limit(limit);
    return rows.map(eventOf);
  }
}
