// Automation opportunities found in the tenant's history: repeated manual action sequences
// (action log, mined on the analytics kernel), workflows that fail often, and kernel tasks
// that workflow steps retry often. Each carries its evidence and an estimated saving with
// the way it was estimated.
import type { Db } from '../../core/db';
import type { Mesh } from '../../core/mesh/mesh';
import type { Caller } from '../../core/roles';

/** Manual actions more than this apart belong to different sessions (sequences do not span them). */
const SESSION_GAP_MS = 10 * 60 * 1000;
const MAX_ROWS = 20_000;
const FAILING_RATE = 0.2;
const MIN_RUNS = 3;
const MIN_RETRIES = 3;

export interface Found {
  kind: 'manual_sequence' | 'failing_workflow' | 'retried_task';
  fingerprint: string;
  title: string;
  evidence: Record<string, unknown>;
  saving: { value: number; unit: string; method: string };
}

export async function scan(db: Db, mesh: Mesh, caller: Caller, since: string): Promise<Found[]> {
  return [...(await manualSequences(db, mesh, caller, since)), ...(await workflowFindings(db, caller.tenantId, since))];
}

async function manualSequences(db: Db, mesh: Mesh, caller: Caller, since: string): Promise<Found[]> {
  const users = db('users').select('id').where('tenant_id', caller.tenantId);
  const rows = (await db('actions').where('source', 'manual').andWhere('created_at', '>=', since).andWhere((q) => q.whereIn('actor', users).orWhere('tenant_id', caller.tenantId)).orderBy('created_at', 'asc').limit(MAX_ROWS).select('actor', 'action', 'target_type', 'target_id', 'created_at')) as Array<{ actor: string; action: string; target_type: string; target_id: string; created_at: string }>;
  // Sessions: one actor's actions with no gap longer than SESSION_GAP_MS.
  const sessions: Array<typeof rows> = [];
  const open = new Map<string, typeof rows>();
  for (const r of rows) {
    const cur = open.get(r.actor);
    if (cur && Date.parse(r.created_at) - Date.parse(cur[cur.length - 1]!.created_at) <= SESSION_GAP_MS) cur.push(r);
    else {
      const s = [r];
      sessions.push(s);
      open.set(r.actor, s);
    }
  }
  const streams = sessions.filter((s) => s.length >= 2).map((s) => s.map((r) => r.action));
  if (!streams.length) return [];
  const { sequences } = (await mesh.run('analytics', 'frequent_sequences', { streams, max_length: 4, min_count: 3 }, { caller })) as { sequences: Array<{ sequence: string[]; count: number }> };
  // Keep the longest sequences: a pair inside a longer repeated sequence is the same habit.
  const kept = sequences.filter((s) => !sequences.some((o) => o.sequence.length > s.sequence.length && o.count >= s.count && o.sequence.join('|').includes(s.sequence.join('|'))));
  const out: Found[] = [];
  for (const s of kept.slice(0, 20)) {
    const spans: number[] = [];
    const actors = new Set<string>();
    const targets: string[][] = [];
    for (const sess of sessions) {
      for (let i = 0; i + s.sequence.length <= sess.length; i++) {
        if (s.sequence.every((a, j) => sess[i + j]!.action === a)) {
          const occ = sess.slice(i, i + s.sequence.length);
          spans.push(Date.parse(occ[occ.length - 1]!.created_at) - Date.parse(occ[0]!.created_at));
          actors.add(occ[0]!.actor);
          targets.push(occ.map((o) => `${o.target_type}:${o.target_id}`));
        }
      }
    }
    const meanSpan = spans.length ? spans.reduce((a, b) => a + b, 0) / spans.length : 0;
    out.push({
      kind: 'manual_sequence',
      fingerprint: `manual_sequence:${s.sequence.join('>')}`,
      title: `The manual sequence ${s.sequence.join(' → ')} was done ${s.count} times`,
      evidence: { sequence: s.sequence, occurrences: s.count, actors: [...actors], recent_targets: targets.slice(-5), mean_span_seconds: Math.round(meanSpan) / 1000 },
      saving: { value: Math.round((s.count * meanSpan) / 10) / 100, unit: 'operator_seconds', method: 'occurrences x mean time from the first to the last action of an occurrence (operator time the sequence took)' },
    });
  }
  return out;
}

type ExecRow = { workflow_id: string; workflow_name: string; state: string; steps: string; started_at: string | null; finished_at: string | null };

async function workflowFindings(db: Db, tenantId: string, since: string): Promise<Found[]> {
  const rows = (await db('workflow_executions').where('tenant_id', tenantId).whereIn('state', ['succeeded', 'failed']).andWhere('finished_at', '>=', since).orderBy('finished_at', 'desc').limit(MAX_ROWS).select('workflow_id', 'workflow_name', 'state', 'steps', 'started_at', 'finished_at')) as ExecRow[];
  const byWorkflow = new Map<string, ExecRow[]>();
  for (const r of rows) byWorkflow.set(r.workflow_id, [...(byWorkflow.get(r.workflow_id) ?? []), r]);
  const out: Found[] = [];
  const retries = new Map<string, { kernel: string; task: string; retries: number; steps: number; duration: number; workflows: Set<string> }>();
  for (const [id, runs] of byWorkflow) {
    const failed = runs.filter((r) => r.state === 'failed');
    const failedSteps = new Map<string, number>();
    for (const r of runs) {
      for (const s of JSON.parse(r.steps) as Array<{ id: string; kernel: string; task: string; state: string; attempts: number; duration_ms: number | null }>) {
        if (s.state === 'failed') failedSteps.set(s.id, (failedSteps.get(s.id) ?? 0) + 1);
        if (s.attempts > 1) {
          const key = `${s.kernel}.${s.task}`;
          const e = retries.get(key) ?? { kernel: s.kernel, task: s.task, retries: 0, steps: 0, duration: 0, workflows: new Set<string>() };
          e.retries += s.attempts - 1;
          e.steps++;
          e.duration += s.duration_ms ?? 0;
          e.workflows.add(id);
          retries.set(key, e);
        }
      }
    }
    const rate = failed.length / runs.length;
    if (runs.length >= MIN_RUNS && rate >= FAILING_RATE) {
      const ms = failed.filter((r) => r.started_at && r.finished_at).map((r) => Date.parse(r.finished_at!) - Date.parse(r.started_at!));
      const mean = ms.length ? ms.reduce((a, b) => a + b, 0) / ms.length : 0;
      out.push({
        kind: 'failing_workflow',
        fingerprint: `failing_workflow:${id}`,
        title: `Workflow "${runs[0]!.workflow_name}" failed ${failed.length} of ${runs.length} runs`,
        evidence: { workflow_id: id, workflow_name: runs[0]!.workflow_name, runs: runs.length, failed: failed.length, failure_rate: Math.round(rate * 1e4) / 1e4, failed_steps: Object.fromEntries(failedSteps) },
        saving: { value: Math.round((failed.length * mean) / 10) / 100, unit: 'compute_seconds', method: 'failed runs x mean duration of a failed run (run time spent on runs that failed)' },
      });
    }
  }
  for (const [key, e] of retries) {
    if (e.retries < MIN_RETRIES) continue;
    out.push({
      kind: 'retried_task',
      fingerprint: `retried_task:${key}`,
      title: `Task ${key} needed ${e.retries} retries in ${e.steps} workflow steps`,
      evidence: { kernel: e.kernel, task: e.task, retries: e.retries, steps_retried: e.steps, workflows: [...e.workflows] },
      saving: { value: e.retries, unit: 'task_retries', method: 'retries counted in workflow step attempts (attempts - 1), each a task run again' },
    });
  }
  return out;
}
