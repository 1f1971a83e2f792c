// Scans, opportunities, skills and generated agents of a tenant. A deployed agent runs its
// skill on a timer under its own service identity (`agent:<id>`, with the role it was given):
// a workflow skill runs its workflow, an actions skill proposes its actions through governance.
import crypto from 'node:crypto';
import { Forbidden, invalid } from '../../core/errors';
import { LeaderJobs } from '../../core/leases';
import { pageOf } from '../../core/pagination';
import { roleAtLeast, type Caller, type Role } from '../../core/roles';
import { TenantScope } from '../../core/tenancy';
import type { AutonomyDeps } from './deps';
import { wrongState } from './errors';
import { scan } from './scan';
import { draftSkill, type Opportunity } from './skills';

const json = (v: unknown) => JSON.stringify(v);
const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : (v ?? null));

export const toScan = (r: Record<string, any>) => ({ id: r.id, tenant_id: r.tenant_id, state: r.state, window_seconds: r.window_seconds, found: r.found ?? null, error: r.error ?? null, created_by: r.created_by, created_at: r.created_at, started_at: r.started_at ?? null, finished_at: r.finished_at ?? null });
export const toOpportunity = (r: Record<string, any>) => ({ id: r.id, tenant_id: r.tenant_id, scan_id: r.scan_id, kind: r.kind, title: r.title, evidence: parse(r.evidence), saving: parse(r.saving), created_at: r.created_at, updated_at: r.updated_at });
export const toSkill = (r: Record<string, any>) => ({ id: r.id, tenant_id: r.tenant_id, opportunity_id: r.opportunity_id, kind: r.kind, name: r.name, workflow_id: r.workflow_id ?? null, steps: parse(r.steps), inputs: parse(r.inputs), created_by: r.created_by, created_at: r.created_at, updated_at: r.updated_at });
export const toAgent = (r: Record<string, any>) => ({ id: r.id, tenant_id: r.tenant_id, skill_id: r.skill_id, name: r.name, state: r.state, role: r.role, schedule_seconds: r.schedule_seconds, inputs: parse(r.inputs), runs: Number(r.runs), last_run_at: r.last_run_at ?? null, last_result: parse(r.last_result), created_by: r.created_by, deployed_by: r.deployed_by ?? null, deployed_at: r.deployed_at ?? null, created_at: r.created_at, updated_at: r.updated_at });
type AgentRow = ReturnType<typeof toAgent>;

/** How often a host looks for agents deployed through another host. */
const RESCAN_MS = 5000;

export class Autonomy {
  private readonly busy = new Set<Promise<unknown>>();
  /** One timer per deployed agent on every host; the agent's lease picks the host that runs it. */
  private readonly jobs: LeaderJobs;

  constructor(private readonly d: AutonomyDeps) {
    this.jobs = new LeaderJobs(d.leases, (name, err) => d.log.error({ err: err.message, job: name }, 'agent run failed'));
  }

  private now() {
    return this.d.clock.now().toISOString();
  }

  private track(p: Promise<unknown>) {
    this.busy.add(p);
    void p.finally(() => this.busy.delete(p));
  }

  private record(caller: Caller, action: string, type: string, id: string, detail: Record<string, unknown> = {}) {
    return this.d.actions.record({ source: caller.id.startsWith('agent:') ? 'automated' : 'manual', actor: caller.id, action, target_type: type, target_id: id, result: 'succeeded', detail, tenant_id: caller.tenantId });
  }

  // ---- scans and opportunities ----

  async startScan(caller: Caller, windowSeconds: number) {
    const at = this.now();
    const row = { id: crypto.randomUUID(), tenant_id: caller.tenantId, state: 'queued', window_seconds: windowSeconds, found: null, error: null, created_by: caller.id, started_at: null, finished_at: null, created_at: at, updated_at: at };
    await this.d.db('autonomous_scans').insert(row);
    await this.record(caller, 'scan_opportunities', 'opportunity_scan', row.id, { window_seconds: windowSeconds });
    this.d.events.publish('opportunity_scan', { scan_id: row.id, tenant_id: caller.tenantId, state: 'queued' });
    this.track(this.runScan(row.id, caller, windowSeconds));
    return toScan(row);
  }

  private async runScan(id: string, caller: Caller, windowSeconds: number) {
    const set = async (patch: Record<string, unknown>) => {
      await this.d.db('autonomous_scans').where({ id }).update({ ...patch, updated_at: this.now() });
      this.d.events.publish('opportunity_scan', { scan_id: id, tenant_id: caller.tenantId, state: patch.state });
    };
    try {
      await set({ state: 'running', started_at: this.now() });
      const since = new Date(this.d.clock.now().getTime() - windowSeconds * 1000).toISOString();
      const found = await scan(this.d.db, this.d.mesh, caller, since);
      for (const f of found) {
        const at = this.now();
        const row = { scan_id: id, kind: f.kind, title: f.title, evidence: json(f.evidence), saving: json(f.saving), updated_at: at };
        // A later scan refreshes an opportunity it finds again (same fingerprint) rather than adding it twice.
        const n = await this.d.db('autonomous_opportunities').where({ tenant_id: caller.tenantId, fingerprint: f.fingerprint }).update(row);
        if (!n) await this.d.db('autonomous_opportunities').insert({ ...row, id: crypto.randomUUID(), tenant_id: caller.tenantId, fingerprint: f.fingerprint, created_at: at });
      }
      await set({ state: 'succeeded', found: found.length, finished_at: this.now() });
    } catch (err) {
      await set({ state: 'failed', error: (err as Error).message, finished_at: this.now() }).catch(() => undefined);
    }
  }

  async scanOf(caller: Caller, id: string) {
    return toScan(await new TenantScope(this.d.db, caller.tenantId).get('autonomous_scans', { id }, 'Scan'));
  }

  async opportunities(caller: Caller, f: { kind?: string; limit: number; cursor?: string }) {
    const q = new TenantScope(this.d.db, caller.tenantId).select('autonomous_opportunities');
    if (f.kind) q.where('kind', f.kind);
    const { items, next_cursor } = await pageOf(q, f.limit, f.cursor);
    return { opportunities: items.map(toOpportunity), next_cursor };
  }

  // ---- skills ----

  async generateSkill(caller: Caller, opportunityId: string, name?: string) {
    const o = toOpportunity(await new TenantScope(this.d.db, caller.tenantId).get('autonomous_opportunities', { id: opportunityId }, 'Opportunity'));
    const draft = await draftSkill(caller, o as Opportunity, name, this.d.workflows, this.d.governance);
    const at = this.now();
    const row = { id: crypto.randomUUID(), tenant_id: caller.tenantId, opportunity_id: o.id, kind: draft.kind, name: draft.name, workflow_id: draft.workflow_id, steps: json(draft.steps), inputs: json(draft.inputs), created_by: caller.id, created_at: at, updated_at: at };
    await this.d.db('autonomous_skills').insert(row);
    await this.record(caller, 'generate_skill', 'skill', row.id, { opportunity_id: o.id, kind: draft.kind });
    return toSkill(row);
  }

  async skills(caller: Caller, f: { limit: number; cursor?: string }) {
    const { items, next_cursor } = await pageOf(new TenantScope(this.d.db, caller.tenantId).select('autonomous_skills'), f.limit, f.cursor);
    return { blueprints: items.map(toSkill), next_cursor };
  }

  // ---- generated agents ----

  async generateAgent(caller: Caller, b: { blueprint_id: string; name?: string; schedule_seconds: number; role: Role; inputs: Record<string, string> }) {
    if (!roleAtLeast(caller.role, b.role)) throw new Forbidden(`An agent cannot get a role (${b.role}) above its creator's (${caller.role})`);
    const skill = toSkill(await new TenantScope(this.d.db, caller.tenantId).get('autonomous_skills', { id: b.blueprint_id }, 'Skill blueprint'));
    for (const i of skill.inputs as Array<{ name: string }>) {
      if (skill.kind === 'actions' && !b.inputs[i.name]) throw invalid(['body', 'inputs', i.name], `input ${i.name} is required by the blueprint`);
    }
    const at = this.now();
    const row = { id: crypto.randomUUID(), tenant_id: caller.tenantId, skill_id: skill.id, name: b.name ?? `agent: ${skill.name}`, state: 'generated', role: b.role, schedule_seconds: b.schedule_seconds, inputs: json(b.inputs), runs: 0, last_run_at: null, last_result: null, created_by: caller.id, deployed_by: null, deployed_at: null, created_at: at, updated_at: at };
    await this.d.db('autonomous_agents').insert(row);
    await this.record(caller, 'generate_agent', 'agent', row.id, { skill_id: skill.id });
    return toAgent(row);
  }

  async deploy(caller: Caller, id: string) {
    const a = toAgent(await new TenantScope(this.d.db, caller.tenantId).get('autonomous_agents', { id }, 'Agent blueprint'));
    if (a.state === 'deployed') throw wrongState('agent', a.state, ['stop'], `Agent ${id} is already ${a.state}`);
    if (!roleAtLeast(caller.role, a.role)) throw new Forbidden(`Deploying an agent with role ${a.role} needs that role`);
    const skill = toSkill(await this.d.db('autonomous_skills').where({ id: a.skill_id }).first());
    const at = this.now();
    const n = await this.d.db('autonomous_agents').where({ id }).whereIn('state', ['generated', 'stopped']).update({ state: 'deployed', deployed_by: caller.id, deployed_at: at, updated_at: at });
    if (!n) throw wrongState('agent', 'deployed', []);
    await this.d.insights.registerAgent({ id: a.id, tenant_id: a.tenant_id, name: a.name, kind: 'generated', description: `Runs skill "${skill.name}" (${skill.kind}) every ${a.schedule_seconds} s`, role: a.role as 'viewer' | 'member' | 'operator', permissions: skill.kind === 'workflow' ? [`run_workflow:${skill.workflow_id}`] : (skill.steps as Array<{ kind: string }>).map((s) => s.kind), state: 'active' });
    await this.record(caller, 'deploy_agent', 'agent', id, { schedule_seconds: a.schedule_seconds, role: a.role });
    const deployed = toAgent(await this.d.db('autonomous_agents').where({ id }).first());
    this.schedule(deployed);
    return deployed;
  }

  /**
   * Stops a deployed agent: no more scheduled runs (a run in progress finishes). Its insight
   * agent is marked stopped; deploy starts it again.
   */
  async stopAgent(caller: Caller, id: string) {
    const a = toAgent(await new TenantScope(this.d.db, caller.tenantId).get('autonomous_agents', { id }, 'Agent blueprint'));
    const at = this.now();
    const n = await this.d.db('autonomous_agents').where({ id, state: 'deployed' }).update({ state: 'stopped', updated_at: at });
    if (!n) throw wrongState('agent', a.state, a.state === 'deployed' ? ['stop'] : ['deploy'], `Agent ${id} is ${a.state}, not deployed`);
    this.unschedule(id);
    await this.d.insights.registerAgent({ ...(await this.d.insights.agent(a.tenant_id, id)), state: 'stopped' });
    await this.record(caller, 'stop_agent', 'agent', id, {});
    return toAgent(await this.d.db('autonomous_agents').where({ id }).first());
  }

  /** Timers for every deployed agent, at plugin start and then every RESCAN_MS (agents deployed through other hosts). */
  resume() {
    return this.jobs.discover(() => this.scheduleDeployed(), RESCAN_MS);
  }

  private async scheduleDeployed() {
    for (const r of await this.d.db('autonomous_agents').where({ state: 'deployed' })) this.schedule(toAgent(r));
  }

  async shutdown() {
    await this.jobs.stop();
    await Promise.allSettled([...this.busy]);
  }

  private jobName(id: string) {
    return `autonomous.agent:${id}`;
  }

  private schedule(a: AgentRow) {
    this.jobs.schedule(this.jobName(a.id), a.schedule_seconds * 1000, () => this.runAgent(a.id));
  }

  private unschedule(id: string) {
    this.track(this.jobs.unschedule(this.jobName(id)));
  }

  /** One scheduled run, on the host holding the agent's lease; false when the agent is no longer deployed. */
  private async runAgent(id: string): Promise<boolean> {
    const a = toAgent(await this.d.db('autonomous_agents').where({ id }).first());
    // Stopped (perhaps through another host): this host's timer goes too.
    if (a.state !== 'deployed') return false;
    const skill = toSkill(await this.d.db('autonomous_skills').where({ id: a.skill_id }).first());
    const caller: Caller = { kind: 'user', id: `agent:${a.id}`, tenantId: a.tenant_id, role: a.role as Role };
    let result: Record<string, unknown>;
    if (skill.kind === 'workflow') {
      const { execution, done } = await this.d.workflows.start(caller, skill.workflow_id!);
      const end = await done;
      result = { execution_id: execution.id, state: end.state, error: end.error };
    } else {
      const pending = await this.d.approvals.list(caller, { state: 'pending', limit: 500 });
      const waiting = pending.items.find((x) => x.origin === `agent:${a.id}`);
      if (waiting) result = { skipped: `approval ${waiting.id} from an earlier run is still pending` };
      else {
        const steps: Array<{ kind: string; status: string; approval_id: string | null; error: string | null }> = [];
        for (const [i, s] of (skill.steps as Array<{ kind: string }>).entries()) {
          const r = await this.d.governance.execute(caller, { kind: s.kind, target: a.inputs[`target_${i + 1}`], params: {} }, { kind: 'agent', agent_id: a.id }, { reason: `scheduled run of agent ${a.name}` });
          steps.push({ kind: s.kind, status: r.status, approval_id: r.approval?.id ?? null, error: r.error });
          if (r.status !== 'executed') break;
        }
        result = { steps };
      }
    }
    const at = this.now();
    result.host = this.jobs.owner;
    await this.d.db('autonomous_agents').where({ id }).update({ runs: a.runs + 1, last_run_at: at, last_result: json(result), updated_at: at });
    this.d.events.publish('agent_run', { agent_id: id, tenant_id: a.tenant_id, result });
    return true;
  }
}
