// Governance policy validation and approvals: provided by plugin `agi`, used by autonomous,
// copilot and enterprise. An action is a named operation of the platform (a mesh control, a
// workflow variant promotion, an agent deployment, ...) with a target and parameters. Its kind
// says which role it needs, how many nodes it touches (blast radius) and how it is done; the
// policies (role, blast radius, change windows, budget, who proposes it) say whether it may run
// now, must wait for a human, or may not run. Every waiting action is an approval request.
import { z } from 'zod';
import { createServiceRef } from '../plugin';
import type { Caller, Role } from '../roles';

export interface ProposedAction {
  kind: string;
  target: string;
  params: Record<string, unknown>;
}

export interface ActionKind {
  kind: string;
  summary: string;
  /** The role a caller needs to run it (and an approver to approve it). */
  role: Role;
  /** Nodes touched and nodes of the kernel (the blast radius is their ratio); null when it touches none. */
  blast(a: ProposedAction): { affected: number; of: number; active_after: number | null } | null;
  /** Threads it adds to the mesh (checked against the thread budget); 0 when none. */
  threads?(a: ProposedAction): number;
  /** Checks the target and params; throws the 404/422 a caller should see. */
  check?(caller: Caller, a: ProposedAction): Promise<void> | void;
  run(caller: Caller, a: ProposedAction): Promise<unknown>;
}

export type RuleName = 'known_action' | 'role' | 'blast_radius' | 'change_window' | 'budget' | 'origin';
export type RuleOutcome = 'allow' | 'require_approval' | 'block';

export interface Verdict {
  decision: RuleOutcome;
  rules: Array<{ rule: RuleName; outcome: RuleOutcome; detail: string }>;
  /** The role an approver needs. */
  approver_role: Role;
}

/** Who proposes the action: a person through the API, or an agent of the platform. */
export type Origin = { kind: 'human' } | { kind: 'agent'; agent_id: string };

export const APPROVAL_STATES = ['pending', 'executed', 'failed', 'rejected', 'expired'] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number];

export interface Approval {
  id: string;
  tenant_id: string;
  action: ProposedAction;
  summary: string;
  state: ApprovalState;
  origin: string;
  requested_by: string;
  reason: string;
  verdict: Verdict;
  chain_id: string | null;
  decided_by: string | null;
  decided_at: string | null;
  comment: string | null;
  result: unknown;
  error: string | null;
  expires_at: string;
  created_at: string;
  updated_at: string;
}

export interface Executed {
  status: 'executed' | 'pending_approval' | 'blocked' | 'failed';
  verdict: Verdict;
  approval: Approval | null;
  result: unknown;
  error: string | null;
}

export interface Governance {
  /** Adds an action kind (plugins register theirs at start). */
  register(kind: ActionKind): void;
  kinds(): ActionKind[];
  validate(caller: Caller, a: ProposedAction, origin: Origin): Promise<Verdict>;
  /** Validates; runs it when allowed, files an approval when a human must decide, refuses when blocked. */
  execute(caller: Caller, a: ProposedAction, origin: Origin, opts?: { reason?: string; chain_id?: string | null }): Promise<Executed>;
}

export interface Approvals {
  list(caller: Caller, filter: { state?: ApprovalState; limit: number; cursor?: string }): Promise<{ items: Approval[]; next_cursor: string | null }>;
  get(caller: Caller, id: string): Promise<Approval>;
  /** Approving runs the action as the approver; 409 when already decided or expired. */
  decide(caller: Caller, id: string, decision: 'approve' | 'reject', comment?: string | null): Promise<Approval>;
  /** Called with every decided approval (the planning loop follows its actions). */
  onDecided(fn: (a: Approval) => void): void;
}

export const governanceRef = createServiceRef<Governance>('agi.governance');
export const approvalsRef = createServiceRef<Approvals>('agi.approvals');

// ---- response shapes shared by the plugins that show approvals and verdicts ----

export const verdictSchema = z.object({
  decision: z.enum(['allow', 'require_approval', 'block']),
  rules: z.array(z.object({ rule: z.enum(['known_action', 'role', 'blast_radius', 'change_window', 'budget', 'origin']), outcome: z.enum(['allow', 'require_approval', 'block']), detail: z.string() })),
  approver_role: z.enum(['viewer', 'member', 'operator', 'admin']),
});

export const proposedActionSchema = z.object({
  kind: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'an action kind'),
  target: z.string().min(1).max(128),
  params: z.record(z.string(), z.unknown()).default({}),
});

export const approvalSchema = z.object({
  id: z.string(),
  tenant_id: z.string(),
  action: z.object({ kind: z.string(), target: z.string(), params: z.record(z.string(), z.unknown()) }),
  summary: z.string(),
  state: z.enum(APPROVAL_STATES),
  origin: z.string(),
  requested_by: z.string(),
  reason: z.string(),
  verdict: verdictSchema,
  chain_id: z.string().nullable(),
  decided_by: z.string().nullable(),
  decided_at: z.string().nullable(),
  comment: z.string().nullable(),
  result: z.unknown(),
  error: z.string().nullable(),
  expires_at: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const executedSchema = z.object({
  status: z.enum(['executed', 'pending_approval', 'blocked', 'failed']),
  verdict: verdictSchema,
  approval: approvalSchema.nullable(),
  result: z.unknown(),
  error: z.string().nullable(),
});
