import type { AccountsService } from '../../core/contracts/accounts';
import { PLATFORM_TENANT } from '../../core/auth/store';
import type { NewSecurityAction, SecurityAction } from '../../core/contracts/security';
import type { Db } from '../../core/db';
import { Forbidden, NotFound, StateConflict } from '../../core/errors';
import type { Mesh } from '../../core/mesh/mesh';
import { actionOf, type SecurityStore } from './store';

interface UserRow {
  id: string;
  tenant_id: string;
  email: string;
}

/** A user the platform refuses (login and tokens), kept in memory for the login check. */
interface Block {
  kind: 'locked' | 'disabled';
  until: number | null;
}

/**
 * Responses that act for real, through core: a locked or disabled account cannot log in
 * and its sessions and tokens are revoked; an isolated node gets no new tasks (paused on
 * the mesh). Each is recorded as a security action, and undone where that makes sense.
 */
export class Responder {
  private readonly blocks = new Map<string, Block>();
  /** Local changes to `blocks`, so that a reload racing one does not undo it. */
  private changes = 0;

  constructor(
    private readonly db: Db,
    private readonly store: SecurityStore,
    private readonly accounts: AccountsService,
    private readonly mesh: Mesh,
    private readonly now: () => Date,
  ) {}

  /** Reads the blocks from the database (at start, then periodically: other hosts lock and unlock too). */
  async load(): Promise<void> {
    const seen = this.changes;
    const rows = await this.db('security_user_blocks');
    // A local lock or unlock while reading: this read may predate it; the next one will not.
    if (seen !== this.changes) return;
    this.blocks.clear();
    for (const r of rows) this.blocks.set(r.user_id, { kind: r.kind, until: r.until ? Date.parse(r.until) : null });
  }

  /** The login check: a locked or disabled user is refused after a correct password. */
  refusal(userId: string): Forbidden | null {
    const b = this.blocks.get(userId);
    if (!b) return null;
    if (b.until !== null && b.until <= this.now().getTime()) return null;
    return b.kind === 'locked'
      ? new Forbidden(`This account is locked until ${new Date(b.until!).toISOString()} after repeated failed logins`, 'ACCOUNT_LOCKED')
      : new Forbidden('This account is disabled', 'ACCOUNT_DISABLED');
  }

  async findUser(tenantId: string | null, identity: string): Promise<UserRow | undefined> {
    const q = this.db('users').where((w) => w.where('email', identity.toLowerCase()).orWhere('id', identity));
    if (tenantId) q.where('tenant_id', tenantId);
    return q.first('id', 'tenant_id', 'email');
  }

  private async block(user: UserRow, kind: Block['kind'], seconds: number | null, base: Omit<NewSecurityAction, 'action' | 'target_type' | 'target_id' | 'result' | 'tenant_id'>): Promise<SecurityAction> {
    const until = seconds === null ? null : new Date(this.now().getTime() + seconds * 1000).toISOString();
    await this.accounts.endAllSessions({ id: user.id, tenantId: user.tenant_id });
    const action = await this.store.recordAction({
      ...base,
      tenant_id: user.tenant_id,
      action: kind === 'locked' ? 'lock_account' : 'disable_user',
      target_type: 'user',
      target_id: user.id,
      result: 'succeeded',
      undoable: true,
      detail: { ...(base.detail ?? {}), email: user.email, until, sessions_revoked: true },
    });
    const row = { user_id: user.id, tenant_id: user.tenant_id, kind, until, action_id: action.id, created_at: action.created_at };
    await this.db('security_user_blocks').insert(row).onConflict('user_id').merge();
    this.blocks.set(user.id, { kind, until: until ? Date.parse(until) : null });
    this.changes += 1;
    return action;
  }

  lockAccount(user: UserRow, seconds: number, base: Omit<NewSecurityAction, 'action' | 'target_type' | 'target_id' | 'result' | 'tenant_id'>) {
    return this.block(user, 'locked', seconds, base);
  }

  disableUser(user: UserRow, base: Omit<NewSecurityAction, 'action' | 'target_type' | 'target_id' | 'result' | 'tenant_id'>) {
    return this.block(user, 'disabled', null, base);
  }

  async revokeSessions(user: UserRow, base: Omit<NewSecurityAction, 'action' | 'target_type' | 'target_id' | 'result' | 'tenant_id'>): Promise<SecurityAction> {
    await this.accounts.endAllSessions({ id: user.id, tenantId: user.tenant_id });
    return this.store.recordAction({ ...base, tenant_id: user.tenant_id, action: 'revoke_sessions', target_type: 'user', target_id: user.id, result: 'succeeded', undoable: false, detail: { ...(base.detail ?? {}), email: user.email } });
  }

  /** Pauses a mesh node: no new tasks reach it while in-flight ones finish. */
  async isolateNode(nodeId: string, actor: string, cause: string | null): Promise<SecurityAction> {
    const found = this.mesh.nodes().find((n) => n.id === nodeId);
    if (!found) throw new NotFound(`Node "${nodeId}" not found`, 'NODE_NOT_FOUND');
    if (found.state !== 'active') throw new StateConflict(found.state, found.state === 'paused' ? ['resume'] : [], `Node ${nodeId} is ${found.state}; only an active node can be isolated`);
    await this.mesh.pauseNode(nodeId, { source: 'manual', actor, cause });
    return this.store.recordAction({ tenant_id: null, action: 'isolate_node', target_type: 'node', target_id: nodeId, trigger: 'operator', actor, result: 'succeeded', undoable: true, detail: { kernel_id: found.kernel_id, previous_state: 'active' } });
  }

  /** Reverses an undoable action: unlock or re-enable a user, resume a node. */
  async undo(id: string, actor: string, scope: { tenantId: string; all: boolean }): Promise<SecurityAction> {
    const q = this.db('security_actions').where({ id });
    // Platform-wide actions (a mesh node) belong to the platform tenant's operators.
    if (!scope.all) q.where((w) => (scope.tenantId === PLATFORM_TENANT ? w.where('tenant_id', scope.tenantId).orWhereNull('tenant_id') : w.where('tenant_id', scope.tenantId)));
    const row = await q.first();
    if (!row) throw new NotFound('Security action not found', 'ACTION_NOT_FOUND');
    const a = actionOf(row);
    if (!a.undoable || a.undone_at) throw new StateConflict(a.undone_at ? 'undone' : 'final', [], a.undone_at ? 'This action was already undone' : `A ${a.action} action cannot be undone`);
    if (a.action === 'lock_account' || a.action === 'disable_user') {
      await this.db('security_user_blocks').where({ user_id: a.target_id, action_id: a.id }).delete();
      if (!(await this.db('security_user_blocks').where({ user_id: a.target_id }).first())) this.blocks.delete(a.target_id);
      this.changes += 1;
    } else if (a.action === 'isolate_node') {
      await this.mesh.resumeNode(a.target_id, { source: 'manual', actor, cause: a.id });
    }
    await this.store.markUndone(a.id, actor);
    await this.store.recordAction({ tenant_id: a.tenant_id, action: `undo_${a.action}`, target_type: a.target_type, target_id: a.target_id, trigger: 'operator', actor, result: 'succeeded', detail: { undoes: a.id } });
    return { ...a, undone_at: this.now().toISOString() };
  }
}
