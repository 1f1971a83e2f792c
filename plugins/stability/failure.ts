import { z } from 'zod';
import type { Db } from '../../core/db';
import { HttpError, NotFound } from '../../core/errors';
import { callSelf } from '../../core/http/loopback';
import type { Inference, NewChain } from '../../core/contracts/insights';
import type { Caller } from '../../core/roles';

export const ANALYSIS_AGENT = 'failure-analysis';

export const failureBody = z.object({
  kind: z.enum(['task', 'workflow', 'incident']),
  /** A task outcome's sequence number (from the kernel's outcomes), a workflow execution id or an incident id. */
  id: z.string().min(1).max(64),
  /** How far back from the failure to look for causes. */
  lookback_seconds: z.number().int().min(10).max(86_400).default(600),
});

export interface Link {
  at: string;
  kind: 'task_error' | 'health_change' | 'breaker' | 'node_action' | 'chaos_experiment' | 'workflow_step' | 'incident' | 'errors_before';
  summary: string;
  evidence: Record<string, unknown>;
}

const WINDOW_AFTER_MS = 60_000;
type Focus = { kernel: string | null; node: string | null; at: string; tenant: string };

/** What happened on a kernel (and node) in the window before `at`: the candidate causes. */
async function causesAround(db: Db, f: Focus, lookbackMs: number): Promise<Link[]> {
  if (!f.kernel) return [];
  const since = new Date(Date.parse(f.at) - lookbackMs).toISOString();
  const until = new Date(Date.parse(f.at) + WINDOW_AFTER_MS).toISOString();
  const links: Link[] = [];
  const health = await db('health_incidents').where('kernel_id', f.kernel).andWhere('at', '>=', since).andWhere('at', '<=', f.at).orderBy('at').limit(50);
  for (const h of health) {
    if (f.node && h.node_id && h.node_id !== f.node) continue;
    links.push({ at: h.at, kind: 'health_change', summary: `${h.node_id ?? h.kernel_id} went ${h.previous} → ${h.health}: ${h.reason}`, evidence: { health_incident_id: h.id, kernel_id: h.kernel_id, node_id: h.node_id } });
  }
  const acts = await db('actions').where((w) => w.where({ target_type: 'kernel', target_id: f.kernel }).orWhere((x) => (f.node ? x.where({ target_type: 'node', target_id: f.node }) : x.whereRaw('1 = 0')))).andWhere('created_at', '>=', since).andWhere('created_at', '<=', until).orderBy('created_at').limit(50);
  for (const a of acts) {
    const breaker = a.actor === 'breaker' || a.action === 'isolate_kernel' || a.action === 'restore_kernel';
    links.push({ at: a.created_at, kind: breaker ? 'breaker' : 'node_action', summary: `${a.action} on ${a.target_type} ${a.target_id} by ${a.actor}${a.cause ? ` (${a.cause})` : ''}`, evidence: { action_id: a.id, result: a.result } });
  }
  // The chaos plugin's store, read for history (its service answers only what runs now).
  const chaos = !(await db.schema.hasTable('chaos_experiments')) ? [] : await db('chaos_experiments').where('started_at', '<=', f.at).andWhere((w) => w.whereNull('ended_at').orWhere('ended_at', '>=', since)).orderBy('started_at').limit(20);
  for (const c of chaos) {
    const domains = JSON.parse(c.target_domains) as string[];
    if (!domains.includes(f.kernel)) continue;
    links.push({ at: c.started_at, kind: 'chaos_experiment', summary: `chaos experiment "${c.scenario_name}" (${c.injection_type}) on ${domains.join(', ')} was ${c.ended_at ? `running until ${c.ended_at}` : 'running'}`, evidence: { experiment_id: c.id, status: c.status, same_tenant: c.tenant_id === f.tenant } });
  }
  const errs = await db('task_outcomes').where('kernel_id', f.kernel).andWhere('ok', false).andWhere('at', '>=', since).andWhere('at', '<', f.at).orderBy('at').select('at', 'task', 'node_id', 'error');
  if (errs.length) {
    const byError = new Map<string, number>();
    for (const e of errs) byError.set(String(e.error), (byError.get(String(e.error)) ?? 0) + 1);
    links.push({ at: errs[0].at, kind: 'errors_before', summary: `${errs.length} failed task(s) on ${f.kernel} before this one, the first at ${errs[0].at}`, evidence: { count: errs.length, by_error: Object.fromEntries([...byError].slice(0, 10)) } });
  }
  return links;
}

async function taskFocus(db: Db, caller: Caller, seq: string): Promise<{ focus: Focus; link: Link }> {
  if (!/^\d{1,18}$/.test(seq)) throw new NotFound(`task outcome ${seq} not found`);
  const o = await db('task_outcomes').where('seq', seq).first();
  // Outcomes of other tenants are not found; platform ones (no tenant) only by operators.
  if (!o || (o.tenant_id ? o.tenant_id !== caller.tenantId : !['operator', 'admin'].includes(caller.role))) throw new NotFound(`task outcome ${seq} not found`);
  return {
    focus: { kernel: o.kernel_id, node: o.node_id, at: o.at, tenant: caller.tenantId },
    link: { at: o.at, kind: 'task_error', summary: o.ok ? `task ${o.kernel_id}.${o.task} on ${o.node_id} succeeded` : `task ${o.kernel_id}.${o.task} failed on ${o.node_id}: ${o.error}`, evidence: { seq: String(o.seq), ok: Boolean(o.ok), duration_ms: Number(o.duration_ms) } },
  };
}

async function viaApi(base: string, token: string, path: string, what: string): Promise<Record<string, any>> {
  const r = await callSelf(base, 'GET', path, { token });
  if (r.status === 404) throw new NotFound(`${what} not found`);
  if (r.status !== 200) throw new HttpError(r.status >= 500 ? 503 : r.status, `could not read the ${what}: ${JSON.stringify(r.body).slice(0, 200)}`);
  return r.body as Record<string, any>;
}

/**
 * The causal chain of a failure: the failure itself, then what the stored records show in the
 * window before it on the same kernel and node (health changes, breaker and control actions,
 * chaos experiments, earlier task errors), ordered by time; the earliest is the first suspect.
 */
export async function analyze(db: Db, caller: Caller, body: z.output<typeof failureBody>, base: string, token: string) {
  const lookback = body.lookback_seconds * 1000;
  const chain: Link[] = [];
  let focus: Focus;
  let failed = true;
  if (body.kind === 'task') {
    const t = await taskFocus(db, caller, body.id);
    focus = t.focus;
    failed = !t.link.evidence.ok;
    chain.push(t.link);
  } else if (body.kind === 'workflow') {
    const e = await viaApi(base, token, `/ops/workflows/${encodeURIComponent(body.id)}`, `workflow execution ${body.id}`);
    const step = (e.steps as Array<Record<string, any>>).find((s) => s.state === 'failed');
    failed = e.state === 'failed';
    const at = step?.finished_at ?? e.finished_at ?? e.created_at;
    focus = { kernel: step?.kernel ?? null, node: null, at, tenant: caller.tenantId };
    chain.push({ at, kind: 'workflow_step', summary: step ? `workflow "${e.workflow_name}" failed at step ${step.id} (${step.kernel}.${step.task}) after ${step.attempts} attempt(s): ${step.error}` : `workflow "${e.workflow_name}" is ${e.state}${e.error ? `: ${e.error}` : ''}`, evidence: { execution_id: e.id, state: e.state } });
    if (step) {
      const o = await db('task_outcomes').where({ kernel_id: step.kernel, task: step.task, ok: false, tenant_id: caller.tenantId }).andWhere('at', '<=', new Date(Date.parse(at) + 5000).toISOString()).orderBy('at', 'desc').first();
      if (o) {
        focus.node = o.node_id;
        chain.push({ at: o.at, kind: 'task_error', summary: `its task failed on ${o.node_id}: ${o.error}`, evidence: { seq: String(o.seq) } });
      }
    }
  } else {
    const i = await viaApi(base, token, `/ops/incidents/${encodeURIComponent(body.id)}`, `incident ${body.id}`);
    focus = { kernel: i.kernel_id ?? i.domain ?? null, node: i.node_id ?? null, at: i.created_at, tenant: caller.tenantId };
    chain.push({ at: i.created_at, kind: 'incident', summary: `incident "${i.title}" (${i.severity}) opened ${i.source === 'automated' ? `automatically${i.cause ? ` on ${i.cause}` : ''}` : 'by hand'}; now ${i.state}`, evidence: { incident_id: i.id, timeline_entries: (i.timeline ?? []).length } });
  }
  const causes = await causesAround(db, focus, lookback);
  const all = [...chain, ...causes].sort((a, b) => a.at.localeCompare(b.at));
  const suspects = causes.filter((c) => c.at <= focus.at);
  const report = {
    subject: { kind: body.kind, id: body.id, failed },
    kernel_id: focus.kernel,
    node_id: focus.node,
    chain: all,
    first_suspect: suspects[0] ?? null,
    method: 'walk back from the failure over stored records of the same kernel and node: health changes, breaker and control actions, chaos experiments and earlier task errors in the lookback window, ordered by time',
    window: { since: new Date(Date.parse(focus.at) - lookback).toISOString(), until: focus.at },
    inputs: ['task_outcomes', 'health_incidents', 'actions', 'chaos_experiments', ...(body.kind === 'workflow' ? ['GET /ops/workflows/{execution_id}'] : []), ...(body.kind === 'incident' ? ['GET /ops/incidents/{incident_id}'] : [])],
  };
  return { report, failure: chain, suspects };
}

/**
 * An analysis as an insight chain: each record it found is an observation (one occurrence,
 * with its summary and evidence), the failure and the first suspect are inferences over them.
 * It recommends no change: its decision is `answered`.
 */
export function analysisChain(a: Awaited<ReturnType<typeof analyze>>, caller: Caller, at: string): NewChain {
  const { report: r, failure, suspects } = a;
  const links = [...failure, ...suspects];
  const observations = links.map((l, i) => ({ id: `o${i + 1}`, metric: `evidence.${l.kind}`, params: { at: l.at }, value: 1, detail: { summary: l.summary, evidence: l.evidence }, at: l.at }));
  const ids = (ls: Link[]) => ls.map((l) => observations[links.indexOf(l)].id);
  const inferences: Inference[] = [{ id: 'i1', text: `${r.subject.kind} ${r.subject.id} ${r.subject.failed ? 'failed' : 'did not fail'}: ${failure.map((l) => l.summary).join('; ')}`, from: ids(failure) }];
  if (suspects.length) {
    inferences.push({ id: 'i2', text: `${suspects.length} candidate cause(s) on ${r.kernel_id ?? 'the kernel'}${r.node_id ? `/${r.node_id}` : ''} in the window before the failure`, from: ids(suspects) });
    inferences.push({ id: 'i3', text: `first suspect: ${suspects[0].summary}`, from: ids([suspects[0]]) });
  }
  return {
    tenant_id: caller.tenantId,
    agent_id: ANALYSIS_AGENT,
    topic: `failure_analysis:${r.subject.kind}`,
    summary: (suspects.length ? `${r.subject.kind} ${r.subject.id}: first suspect ${suspects[0].summary}` : `${r.subject.kind} ${r.subject.id}: no candidate cause in the window`).slice(0, 500),
    observations,
    inferences,
    recommendation: null,
    decision: { state: 'answered', by: caller.id, at },
  };
}
