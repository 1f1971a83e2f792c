import type { ActionLog } from '../../core/actions';
import type { AuthService } from '../../core/auth/service';
import type { AccountsService } from '../../core/contracts/accounts';
import type { KeySource, NewSecurityAction, SecurityService } from '../../core/contracts/security';
import type { Db } from '../../core/db';
import type { EventBus } from '../../core/events';
import type { Logger } from '../../core/logger';
import type { Mesh } from '../../core/mesh/mesh';
import { Predictive } from './predictive';
import { Responder } from './responses';
import type { Rule } from './rules';
import { watchSources } from './sources';
import { actionOf, SecurityStore, type RuleResponder } from './store';
import { pageOf } from '../../core/pagination';

/** How often the account blocks are read again from the database. */
const BLOCK_SYNC_MS = 5000;

export interface SecurityDeps {
  db: Db;
  events: EventBus;
  actions: ActionLog;
  log: Logger;
  accounts: AccountsService;
  auth: AuthService;
  mesh: Mesh;
  clock: { now(): Date };
}

/** The service the plugin provides (securityRef), and what its own routes use. */
export class SecurityCore implements SecurityService {
  readonly store: SecurityStore;
  readonly responder: Responder;
  readonly predictive: Predictive;
  readonly keySources: KeySource[] = [];
  private unwatch: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  readonly now: () => Date;

  constructor(private readonly d: SecurityDeps) {
    this.now = () => d.clock.now();
    this.store = new SecurityStore(d.db, d.events, d.actions, d.log, this.now);
    this.responder = new Responder(d.db, this.store, d.accounts, d.mesh, this.now);
    this.predictive = new Predictive(d.db, d.events, d.mesh, d.log, this.now);
    this.store.responder = this.respond;
  }

  async start(): Promise<void> {
    await this.responder.load();
    // Locks taken or lifted by another host on a shared database reach this one within a few seconds.
    this.timer = setInterval(() => void this.responder.load().catch((err: Error) => this.d.log.warn({ err: err.message }, 'security blocks not reloaded')), BLOCK_SYNC_MS);
    this.timer.unref();
    this.d.accounts.addLoginCheck((user) => this.responder.refusal(user.id));
    // A locked or disabled user's tokens are refused too, even one issued in the second of the lock.
    this.d.auth.addClaimsCheck((claims) => (this.responder.refusal(claims.sub) ? { valid: false, reason: 'revoked' } : null));
    this.unwatch = watchSources(this.d.events, this.d.db, (e) => this.store.record(e), this.d.log, this.now);
  }

  async stop(): Promise<void> {
    this.unwatch?.();
    if (this.timer) clearInterval(this.timer);
    await Promise.allSettled([...this.predictive.pending]);
    await this.store.settled();
  }

  /** A rule's automatic response to a new finding. */
  private readonly respond: RuleResponder = async (rule: Rule, finding, e) => {
    if (!rule.response) return null;
    const user = await this.responder.findUser(e.tenant_id, finding.subject);
    const base = { trigger: 'rule' as const, finding_id: finding.id, actor: 'security', detail: { rule_id: rule.id, rule_version: rule.version } };
    if (!user) {
      // The subject is not an account of the platform (e.g. guesses at an unknown e-mail): nothing to lock.
      return this.store.recordAction({ ...base, tenant_id: e.tenant_id, action: rule.response.action, target_type: 'identity', target_id: finding.subject, result: 'refused', detail: { ...base.detail, reason: 'no platform user with this identity' } });
    }
    if (rule.response.action === 'lock_account') return this.responder.lockAccount(user, rule.response.lock_seconds, base);
    return this.responder.revokeSessions(user, base);
  };

  addKeySource(source: KeySource): void {
    if (!this.keySources.some((s) => s.name === source.name)) this.keySources.push(source);
  }

  record: SecurityService['record'] = (e) => this.store.record(e);
  recordAction: SecurityService['recordAction'] = (a: NewSecurityAction) => this.store.recordAction(a);
  markUndone: SecurityService['markUndone'] = (id, by) => this.store.markUndone(id, by);
  actions: SecurityService['actions'] = async (tenantId, filter, limit, cursor) => {
    const q = this.d.db('security_actions').where({ tenant_id: tenantId });
    if (filter.actions) q.whereIn('action', filter.actions);
    if (filter.trigger) q.where('trigger', filter.trigger);
    const { items, next_cursor } = await pageOf(q, limit, cursor);
    return { actions: items.map(actionOf), next_cursor };
  };
  activeFindings: SecurityService['activeFindings'] = (t, l) => this.store.activeFindings(t, l);
  recentEvents: SecurityService['recentEvents'] = (t, c, s, l) => this.store.recentEvents(t, c, s, l);

  async disableUser(input: Parameters<SecurityService['disableUser']>[0]) {
    const user = await this.responder.findUser(input.tenant_id, input.identity);
    if (!user) return null;
    return this.responder.disableUser(user, { trigger: input.trigger, actor: input.actor, detail: { reason: input.reason } });
  }
}
