// Workflow evolution: a variant is a changed copy of a workflow's steps. A live canary takes a
// share of the workflow's real runs (whoever starts them) for the variant's steps, spread
// evenly; a synthetic canary starts the runs itself. When `runs` runs have finished it
// measures success, latency and compute cost of both arms and tests the difference on the
// analytics kernel. Promotion (a governed action) makes the variant the definition; a worse
// variant is not promoted. States: created → canary → evaluated → promoted | rolled_back.
import crypto from 'node:crypto';
import { Conflict, invalid } from '../../core/errors';
import type { Caller } from '../../core/roles';
import { TenantScope } from '../../core/tenancy';
import type { ActionKind, Executed } from '../../core/contracts/governance';
import type { RunRouter, WorkflowExecution, WorkflowStep } from '../../core/contracts/workflows';
import type { VariantDeps } from './deps';
import { wrongState } from './errors';

export const VARIANT_STATES = ['created', 'canary', 'evaluated', 'promoted', 'rolled_back'] as const;
type State = (typeof VARIANT_STATES)[number];
const ALLOWED: Record<State, string[]> = { created: ['canary'], canary: ['rollback'], evaluated: ['canary', 'promote', 'rollback'], promoted: ['rollback'], rolled_back: [] };
/** A worse arm must also be this much worse in latency or cost to count (besides significance). */
const MATERIAL = 1.2;
const MAX_RETRIES = 5;

export interface Changes {
  retries?: number;
  timeout_ms?: number;
  steps?: Array<{ id: string; kernel?: string; task?: string; input?: unknown; retries?: number; timeout_ms?: number }>;
}

const json = (v: unknown) => JSON.stringify(v);
const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : (v ?? null));
export const toVariant = (r: Record<string, any>) => ({ id: r.id as string, tenant_id: r.tenant_id as string, workflow_id: r.workflow_id as string, state: r.state as State, allowed_actions: ALLOWED[r.state as State], changes: parse(r.changes), steps: parse(r.steps) as WorkflowStep[], baseline_steps: parse(r.baseline_steps) as WorkflowStep[], canary: parse(r.canary), created_by: r.created_by as string, created_at: r.created_at as string, updated_at: r.updated_at as string });
type Variant = ReturnType<typeof toVariant>;

function arm(runs: WorkflowExecution[]) {
  const ok = runs.filter((r) => r.state === 'succeeded');
  // Latency and cost of successful runs only: a run that fails early is fast and cheap, and
  // comparing it with a run that did the work would reward failing.
  const latency = ok.filter((r) => r.started_at && r.finished_at).map((r) => Date.parse(r.finished_at!) - Date.parse(r.started_at!));
  const cost = ok.map((r) => r.steps.reduce((a, s) => a + (s.duration_ms ?? 0), 0));
  const sorted = [...latency].sort((a, b) => a - b);
  const at = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]! : null);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  return { runs: runs.length, succeeded: ok.length, success_rate: runs.length ? ok.length / runs.length : null, latency_ms: { mean: mean(latency), p50: at(0.5), p95: at(0.95) }, compute_ms: { mean: mean(cost) }, executions: runs.map((r) => r.id), samples: { latency, cost } };
}

/** Run i of a canary goes to the variant when floor((i+1)·share) > floor(i·share): evenly spread. */
const toVariantArm = (i: number, share: number) => Math.floor((i + 1) * share) > Math.floor(i * share);

export class Variants {
  private readonly busy = new Set<Promise<unknown>>();
  private stopping = false;
  /** Runs this host has routed per live canary (each host spreads its own share). */
  private readonly routed = new Map<string, number>();

  constructor(private readonly d: VariantDeps) {}

  private now() {
    return this.d.clock.now().toISOString();
  }

  private async get(tenantId: string, id: string): Promise<Variant> {
    return toVariant(await new TenantScope(this.d.db, tenantId).get('autonomous_variants', { id }, 'Workflow variant'));
  }

  view(caller: Caller, id: string) {
    return this.get(caller.tenantId, id);
  }

  private async move(v: Variant, to: State, patch: Record<string, unknown> = {}, from: State[] = [v.state]) {
    const n = await this.d.db('autonomous_variants').where({ id: v.id }).whereIn('state', from).update({ state: to, ...patch, updated_at: this.now() });
    if (!n) {
      const now = await this.get(v.tenant_id, v.id);
      throw wrongState('variant', now.state, ALLOWED[now.state]);
    }
    this.d.events.publish('workflow_variant', { variant_id: v.id, workflow_id: v.workflow_id, tenant_id: v.tenant_id, state: to, previous: v.state });
  }

  private record(caller: Caller, action: string, v: Variant, detail: Record<string, unknown> = {}) {
    return this.d.actions.record({ source: 'manual', actor: caller.id, action, target_type: 'workflow_variant', target_id: v.id, result: 'succeeded', detail: { workflow_id: v.workflow_id, ...detail }, tenant_id: v.tenant_id });
  }

  /** The kind governance runs on promotion (registered at start). */
  promoteKind(): ActionKind {
    return {
      kind: 'promote_variant',
      summary: "Make a workflow variant the workflow's definition (target: the variant id)",
      role: 'member',
      blast: () => null,
      check: async (c, a) => void (await this.get(c.tenantId, a.target)),
      run: async (c, a) => {
        const v = await this.get(c.tenantId, a.target);
        if (v.state !== 'evaluated') throw wrongState('variant', v.state, ALLOWED[v.state]);
        const current = await this.d.workflows.definition(c, v.workflow_id);
        await this.d.workflows.replaceSteps(c, v.workflow_id, v.steps);
        await this.move(v, 'promoted', { baseline_steps: json(current.steps) });
        await this.record(c, 'promote_variant', v);
        return { variant_id: v.id, workflow_id: v.workflow_id, steps: v.steps.length };
      },
    };
  }

  async evolve(caller: Caller, workflowId: string, changes: Changes | undefined) {
    const def = await this.d.workflows.definition(caller, workflowId);
    const applied = changes && Object.keys(changes).length ? changes : await this.derive(caller, def.id, def.steps);
    const byId = new Map(def.steps.map((s) => [s.id, s]));
    for (const [i, s] of (applied.steps ?? []).entries()) if (!byId.has(s.id)) throw invalid(['body', 'changes', 'steps', i, 'id'], `workflow ${def.id} has no step "${s.id}"`);
    const steps: WorkflowStep[] = def.steps.map((s) => {
      const c = applied.steps?.find((x) => x.id === s.id);
      const out: WorkflowStep = { ...s };
      if (applied.retries !== undefined) out.retries = applied.retries;
      if (applied.timeout_ms !== undefined) out.timeout_ms = applied.timeout_ms;
      if (c) {
        for (const k of ['kernel', 'task', 'input', 'retries', 'timeout_ms'] as const) if (c[k] !== undefined) (out as unknown as Record<string, unknown>)[k] = c[k];
      }
      return out;
    });
    if (json(steps) === json(def.steps)) throw invalid(['body', 'changes'], 'the changes leave the steps as they are');
    this.d.workflows.check(steps);
    const at = this.now();
    const row = { id: crypto.randomUUID(), tenant_id: caller.tenantId, workflow_id: def.id, state: 'created', changes: json(applied), steps: json(steps), baseline_steps: json(def.steps), canary: null, created_by: caller.id, created_at: at, updated_at: at };
    await this.d.db('autonomous_variants').insert(row);
    const v = toVariant(row);
    await this.record(caller, 'evolve_workflow', v, { changes: applied });
    return v;
  }

  /** Changes read from measured failures: failed steps get one more attempt, timed-out ones twice the time. */
  private async derive(caller: Caller, workflowId: string, steps: WorkflowStep[]): Promise<Changes> {
    const rows = await this.d.db('workflow_executions').where({ tenant_id: caller.tenantId, workflow_id: workflowId, state: 'failed' }).orderBy('created_at', 'desc').limit(200).select('steps');
    const out = new Map<string, { id: string; retries?: number; timeout_ms?: number }>();
    const shape = (xs: Array<{ id: string; kernel: string; task: string }>) => xs.map((x) => `${x.id}:${x.kernel}.${x.task}`).join('|');
    for (const r of rows) {
      const ran = JSON.parse(r.steps) as Array<{ id: string; kernel: string; task: string; state: string; error: string | null }>;
      // Runs of other steps (a variant's canary runs) say nothing about these steps.
      if (shape(ran) !== shape(steps)) continue;
      for (const s of ran) {
        if (s.state !== 'failed') continue;
        const def = steps.find((x) => x.id === s.id);
        if (!def) continue;
        const c = out.get(s.id) ?? { id: s.id };
        if (/did not finish within/.test(s.error ?? '')) c.timeout_ms = Math.min(3_600_000, (def.timeout_ms ?? this.d.mesh.cfg.taskTimeoutMs) * 2);
        else c.retries = Math.min(MAX_RETRIES, (def.retries ?? 0) + 1);
        out.set(s.id, c);
      }
    }
    if (!out.size) throw invalid(['body', 'changes'], `no failed step of workflow ${workflowId} is recorded to evolve from; give the changes`);
    return { steps: [...out.values()] };
  }

  async canary(caller: Caller, id: string, opts: { share: number; runs: number; alpha: number; mode: 'live' | 'synthetic' }) {
    const v = await this.get(caller.tenantId, id);
    if (!ALLOWED[v.state].includes('canary')) throw wrongState('variant', v.state, ALLOWED[v.state]);
    const live = await this.d.db('autonomous_variants').where({ tenant_id: v.tenant_id, workflow_id: v.workflow_id, state: 'canary' }).whereNot({ id: v.id }).first('id');
    if (live) throw new Conflict(`variant ${live.id} of workflow ${v.workflow_id} is in canary; roll it back first`, 'CANARY_RUNNING');
    const canary = { mode: opts.mode, share: opts.share, runs: opts.runs, alpha: opts.alpha, started_at: this.now(), finished_at: null, progress: { done: 0, total: opts.runs }, arms: null, test: null, decision: null, reasons: [], error: null };
    await this.d.db('autonomous_canary_runs').where({ variant_id: v.id }).delete();
    this.routed.delete(v.id);
    await this.move(v, 'canary', { canary: json(canary) });
    await this.record(caller, 'canary_variant', v, { mode: opts.mode, share: opts.share, runs: opts.runs });
    if (opts.mode === 'synthetic') {
      const p = this.runCanary(caller, { ...v, state: 'canary' }, canary).catch((err: Error) => this.d.log.error({ err: err.message, variant: id }, 'canary failed to record'));
      this.busy.add(p);
      void p.finally(() => this.busy.delete(p));
    }
    return this.get(caller.tenantId, id);
  }

  /** The workflows plugin's run router: a live canary's share of the workflow's runs. */
  router(): RunRouter {
    return async (_caller, def) => {
      if (this.stopping) return null;
      const row = await this.d.db('autonomous_variants').where({ tenant_id: def.tenant_id, workflow_id: def.id, state: 'canary' }).first();
      if (!row) return null;
      const v = toVariant(row);
      if (v.canary?.mode !== 'live') return null;
      const i = this.routed.get(v.id) ?? 0;
      // Enough runs routed from this host: the rest of the traffic stays on the definition.
      if (i >= v.canary.runs) return null;
      this.routed.set(v.id, i + 1);
      const arm = toVariantArm(i, v.canary.share) ? 'variant' : 'baseline';
      return { steps: arm === 'variant' ? v.steps : def.steps, label: `canary:${v.id}:${arm}`, onFinished: (e) => this.collect(v, arm, e) };
    };
  }

  /** Stores a finished live-canary run; the run that completes the count evaluates the canary. */
  private async collect(v: Variant, arm: 'baseline' | 'variant', e: WorkflowExecution): Promise<void> {
    try {
      await this.d.db('autonomous_canary_runs').insert({ execution_id: e.id, variant_id: v.id, tenant_id: v.tenant_id, arm, execution: json(e), created_at: this.now() });
      const rows = await this.d.db('autonomous_canary_runs').where({ variant_id: v.id }).orderBy('created_at').limit(v.canary.runs);
      const canary = { ...v.canary, progress: { done: rows.length, total: v.canary.runs } };
      if (rows.length < v.canary.runs) {
        await this.d.db('autonomous_variants').where({ id: v.id, state: 'canary' }).update({ canary: json(canary), updated_at: this.now() });
        return;
      }
      const runs = rows.map((r) => ({ arm: r.arm as string, e: parse(r.execution) as WorkflowExecution }));
      const caller: Caller = { kind: 'user', id: v.created_by, tenantId: v.tenant_id, role: 'member' };
      await this.evaluate(caller, v, canary, runs.filter((r) => r.arm === 'baseline').map((r) => r.e), runs.filter((r) => r.arm === 'variant').map((r) => r.e));
    } catch (err) {
      this.d.log.error({ err: (err as Error).message, variant: v.id, execution: e.id }, 'live canary: could not record a run');
    }
  }

  private async runCanary(caller: Caller, v: Variant, canary: Record<string, any>) {
    const baseline: WorkflowExecution[] = [];
    const variant: WorkflowExecution[] = [];
    try {
      for (let i = 0; i < canary.runs; i++) {
        // Rolled back meanwhile: the canary ends. The host stopping: it ends unevaluated (the
        // variant stays in canary; a new canary cannot start from there, a rollback can).
        if (this.stopping || (await this.get(v.tenant_id, v.id)).state !== 'canary') return;
        // Variant runs spread evenly: run i goes to the variant when floor((i+1)·share) > floor(i·share).
        const toVariant = toVariantArm(i, canary.share);
        const { done } = await this.d.workflows.start(caller, v.workflow_id, toVariant ? { steps: v.steps } : {});
        (toVariant ? variant : baseline).push(await done);
        canary.progress = { done: i + 1, total: canary.runs };
        await this.d.db('autonomous_variants').where({ id: v.id, state: 'canary' }).update({ canary: json(canary), updated_at: this.now() });
      }
    } catch (err) {
      Object.assign(canary, { finished_at: this.now(), decision: 'do_not_promote', reasons: ['the canary could not finish'], error: (err as Error).message });
      await this.move(v, 'evaluated', { canary: json(canary) }, ['canary']).catch(() => undefined);
      return;
    }
    await this.evaluate(caller, v, canary, baseline, variant);
  }

  /** Tests the arms on the analytics kernel and moves the variant to evaluated (once, whoever calls). */
  private async evaluate(caller: Caller, v: Variant, canary: Record<string, any>, baseline: WorkflowExecution[], variant: WorkflowExecution[]) {
    try {
      const a = arm(baseline);
      const b = arm(variant);
      const test = (await this.d.mesh.run('analytics', 'ab_test', { a: { successes: a.succeeded, trials: Math.max(1, a.runs), latency_ms: a.samples.latency, cost: a.samples.cost }, b: { successes: b.succeeded, trials: Math.max(1, b.runs), latency_ms: b.samples.latency, cost: b.samples.cost } }, { caller })) as Record<string, any>;
      const reasons: string[] = [];
      if (!a.runs || !b.runs) reasons.push('an arm had no runs: nothing to compare');
      if (test.fisher_p_b_lower < canary.alpha) reasons.push(`success rate lower: ${b.succeeded}/${b.runs} against ${a.succeeded}/${a.runs} (Fisher's exact p = ${test.fisher_p_b_lower.toPrecision(3)} < ${canary.alpha})`);
      for (const [name, t] of [['latency', test.latency], ['compute cost', test.cost]] as const) {
        if (t.p_greater !== null && t.p_greater < canary.alpha && t.mean_b > MATERIAL * t.mean_a) reasons.push(`${name} higher: mean ${t.mean_b.toFixed(1)} against ${t.mean_a.toFixed(1)} ms (Welch p = ${t.p_greater.toPrecision(3)} < ${canary.alpha}, more than ${Math.round((MATERIAL - 1) * 100)}% worse)`);
      }
      const strip = ({ samples: _s, ...rest }: ReturnType<typeof arm>) => rest;
      Object.assign(canary, {
        finished_at: this.now(),
        arms: { baseline: strip(a), variant: strip(b) },
        test,
        decision: reasons.length ? 'do_not_promote' : 'promote',
        reasons,
        method: `one-sided Fisher's exact test of the variant's success rate against the baseline's; Welch's t-test of latency and compute cost (sum of step run times) of the successful runs, worse only when significant at alpha and more than ${Math.round((MATERIAL - 1) * 100)}% higher`,
      });
    } catch (err) {
      Object.assign(canary, { finished_at: this.now(), decision: 'do_not_promote', reasons: ['the canary could not finish'], error: (err as Error).message });
    }
    await this.move(v, 'evaluated', { canary: json(canary) }, ['canary']).catch(() => undefined);
  }

  async promote(caller: Caller, id: string): Promise<{ variant: Variant; governance: Executed }> {
    const v = await this.get(caller.tenantId, id);
    if (!ALLOWED[v.state].includes('promote')) throw wrongState('variant', v.state, ALLOWED[v.state]);
    if (v.canary?.decision !== 'promote') throw new Conflict(`The canary found the variant worse: ${(v.canary?.reasons ?? []).join('; ')}`, 'VARIANT_WORSE', { reasons: v.canary?.reasons ?? [] });
    const g = await this.d.governance.execute(caller, { kind: 'promote_variant', target: id, params: {} }, { kind: 'human' }, { reason: 'canary decision: promote' });
    return { variant: await this.get(caller.tenantId, id), governance: g };
  }

  async rollback(caller: Caller, id: string) {
    const v = await this.get(caller.tenantId, id);
    if (!ALLOWED[v.state].includes('rollback')) throw wrongState('variant', v.state, ALLOWED[v.state]);
    if (v.state === 'promoted') await this.d.workflows.replaceSteps(caller, v.workflow_id, v.baseline_steps);
    await this.move(v, 'rolled_back');
    await this.record(caller, 'rollback_variant', v, { restored_definition: v.state === 'promoted' });
    return this.get(caller.tenantId, id);
  }

  async stop() {
    this.stopping = true;
    await Promise.allSettled([...this.busy]);
  }
}
