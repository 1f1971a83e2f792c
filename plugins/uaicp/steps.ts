// The steps of a workflow run across clouds (/uaicp/workflows/execute): references between
// steps use the workflows plugin's syntax (core/step-refs.ts) and are checked before anything
// is placed or run.
import { Unprocessable, type ValidationIssue } from '../../core/errors';
import type { Mesh } from '../../core/mesh/mesh';
import type { Caller } from '../../core/roles';
import { pathError, RefError, resolve, walk } from '../../core/step-refs';
import type { Deps } from './deps';

export interface Step {
  id: string;
  kernel: string;
  task: string;
  input: unknown;
  timeout_ms?: number;
}

/**
 * 422 BAD_REFERENCE naming the step and the place in its input: a reference of the wrong form,
 * to a step that does not exist, to the step itself or a later one, or to a path the
 * referenced task's output schema cannot hold.
 */
export function checkRefs(mesh: Mesh, steps: Step[]): void {
  const issues: ValidationIssue[] = [];
  const index = new Map(steps.map((s, i) => [s.id, i]));
  steps.forEach((s, i) => {
    for (const r of walk(s.input ?? {})) {
      const loc = ['workflow', 'steps', i, 'input', ...r.at];
      const bad = (msg: string) => issues.push({ loc, msg: `step "${s.id}": ${msg}`, type: 'reference_error' });
      r.errors.forEach(bad);
      for (const ref of r.refs) {
        const j = index.get(ref.step);
        if (j === undefined) bad(`${ref.text} names step "${ref.step}"; the workflow has ${steps.map((x) => `"${x.id}"`).join(', ')}`);
        else if (j >= i) bad(`${ref.text} names step "${ref.step}", which runs ${j === i ? 'as this step' : 'after this one'}: a step reads earlier steps' outputs only`);
        else {
          const target = steps[j]!;
          const task = mesh.hasKernel(target.kernel) ? mesh.catalogue(target.kernel).find((t) => t.name === target.task) : undefined;
          const err = task ? pathError(task.output_schema as object, ref.path) : null;
          if (err) bad(`${ref.text}: the ${target.kernel}.${target.task} ${err}`);
        }
      }
    }
  });
  if (issues.length) throw new Unprocessable(issues, 'BAD_REFERENCE');
}

/** Runs the placed steps in order, each input with its references replaced by earlier outputs. */
export async function runSteps(services: Deps, caller: Caller, steps: Step[], placements: Array<{ workload_id: string; choice: { provider: string; region: string; node_id: string | null } }>, signal: AbortSignal) {
  const out = [];
  const outputs = new Map<string, unknown>();
  let failed: string | null = null;
  for (const [i, s] of steps.entries()) {
    const p = placements[i]!;
    const placement = { workload_id: p.workload_id, provider: p.choice.provider, region: p.choice.region, node_id: p.choice.node_id };
    if (failed) {
      out.push({ id: s.id, kernel: s.kernel, task: s.task, placement, input: null, state: 'skipped', output: null, error: null, duration_ms: null });
      continue;
    }
    const t0 = performance.now();
    let input: unknown = null;
    try {
      input = resolve(s.input ?? {}, outputs);
      // The router placed the step in the local region; the mesh runs it on that region's least busy node.
      const output = await services.mesh.run(s.kernel, s.task, input, { signal, caller, timeoutMs: s.timeout_ms });
      outputs.set(s.id, output);
      out.push({ id: s.id, kernel: s.kernel, task: s.task, placement, input, state: 'succeeded', output, error: null, duration_ms: Math.round((performance.now() - t0) * 1000) / 1000 });
    } catch (err) {
      const msg = err instanceof RefError ? `reference: ${err.message}` : (err as Error).message;
      failed = `step "${s.id}" failed: ${msg}`;
      out.push({ id: s.id, kernel: s.kernel, task: s.task, placement, input, state: 'failed', output: null, error: msg, duration_ms: Math.round((performance.now() - t0) * 1000) / 1000 });
    }
  }
  if (failed) throw new Error(failed);
  return { steps: out };
}
