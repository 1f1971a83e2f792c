import { z } from 'zod';
import { jobViewFields } from '../../core/jobs';
import { Unprocessable, type ValidationIssue } from '../../core/errors';
import { kernelId } from '../../core/mesh/schemas';
import type { Mesh } from '../../core/mesh/mesh';
import { STEP_LIMITS, type StepType } from '../../core/contracts/workflows';
import { walk, type Path } from '../../core/step-refs';
import { EXEC_STATES, STEP_STATES } from './store';

export const stepId = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'lowercase letters, digits and _, starting with a letter');

export const stepDef = z.object({
  id: stepId,
  kernel: kernelId,
  // A kernel task name, or what a registered step type names (`<api>.<operationId>` for http).
  task: z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]*$/, 'a task name').max(STEP_LIMITS.taskMax),
  input: z.unknown().default({}),
  timeout_ms: z.number().int().min(STEP_LIMITS.timeoutMs.min).max(STEP_LIMITS.timeoutMs.max).optional(),
  retries: z.number().int().min(STEP_LIMITS.retries.min).max(STEP_LIMITS.retries.max).optional(),
});

export const definitionBody = z.object({
  name: z.string().trim().min(1).max(200),
  steps: z.array(stepDef).max(100),
});

export const definition = z.object({
  id: z.string(),
  tenant_id: z.string(),
  name: z.string(),
  steps: z.array(z.object({ id: z.string(), kernel: z.string(), task: z.string(), input: z.unknown(), timeout_ms: z.number().optional(), retries: z.number().optional() })),
  created_by: z.string(),
  created_at: z.string(),
});

export const execution = z.object({
  id: z.string(),
  tenant_id: z.string(),
  workflow_id: z.string(),
  workflow_name: z.string(),
  state: z.enum(EXEC_STATES),
  steps: z.array(
    z.object({
      id: z.string(),
      kernel: z.string(),
      task: z.string(),
      state: z.enum(STEP_STATES),
      attempts: z.number().int(),
      started_at: z.string().nullable(),
      finished_at: z.string().nullable(),
      duration_ms: z.number().nullable(),
      output: z.unknown(),
      error: z.string().nullable(),
    }),
  ),
  ...jobViewFields,
  route: z.string().nullable().describe('Set when a router chose the steps of this run (a canary: `canary:<variant id>:baseline|variant`)'),
});

export const page = {
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().min(1).max(512).optional(),
};

const startsWith = (p: Path, prefix: Path) => prefix.length <= p.length && prefix.every((x, i) => String(x) === String(p[i]));

/**
 * Checks what a schema cannot: unique step ids, known kernels and tasks, references of the
 * right form naming an earlier step, and each input against its task's schema. A field that
 * holds a reference is checked when the step runs (its value is known only then).
 */
export function checkSteps(mesh: Mesh, types: ReadonlyMap<string, StepType>, steps: z.output<typeof definitionBody>['steps']): void {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  steps.forEach((s, i) => {
    const at = (...rest: Path): Path => ['body', 'steps', i, ...rest];
    const bad = (loc: Path, msg: string, type = 'value_error') => issues.push({ loc, msg: `step "${s.id}": ${msg}`, type });
    if (seen.has(s.id)) bad(at('id'), 'duplicate step id');
    const type = types.get(s.kernel);
    const kernel = !type && mesh.hasKernel(s.kernel) ? mesh.kernelOf(s.kernel) : null;
    if (!kernel && !type) bad(at('kernel'), `unknown kernel "${s.kernel}"; known: ${[...mesh.kernelIds(), ...types.keys()].join(', ')}`);
    else if (kernel && !Object.hasOwn(kernel.manifest.tasks, s.task)) bad(at('task'), `kernel "${s.kernel}" has no task "${s.task}"; tasks: ${Object.keys(kernel.manifest.tasks).join(', ')}`);
    const refs = walk(s.input);
    for (const r of refs) {
      for (const e of r.errors) bad(at('input', ...r.at), e);
      for (const ref of r.refs) if (!seen.has(ref.step)) bad(at('input', ...r.at), `${ref.text} names step "${ref.step}", which is not an earlier step`);
    }
    if (type) {
      for (const issue of type.check(s.task, s.input)) {
        if (issue.loc[0] === 'input' && refs.some((r) => startsWith(issue.loc.slice(1), r.at))) continue;
        bad(at(...issue.loc), issue.msg, issue.type);
      }
    }
    if (kernel && Object.hasOwn(kernel.manifest.tasks, s.task)) {
      for (const issue of mesh.validateInput(s.kernel, s.task, s.input)) {
        const p = issue.loc.slice(1);
        if (refs.some((r) => startsWith(p, r.at))) continue;
        bad(at('input', ...p), issue.msg, issue.type);
      }
    }
    seen.add(s.id);
  });
  if (issues.length) throw new Unprocessable(issues);
}
