import { z } from 'zod';
import { HttpError, NotFound, Unavailable } from '../../core/errors';
import { callSelf } from '../../core/http/loopback';
import { STEP_LIMITS } from '../../core/contracts/workflows';

// The exchange format of workflow definitions, versioned so that a later change of the
// workflow model can still read version 1 (docs/groups/stability.md, "Workflow format").
export const FORMAT = 'platform-control/workflow' as const;

// The workflows API's step bounds, so that a document it exported imports again and a bad
// one is refused here, at the document's own field.
const step = z.strictObject({
  id: z.string().min(1).max(64),
  kernel: z.string().min(1).max(64),
  task: z.string().min(1).max(STEP_LIMITS.taskMax),
  input: z.unknown(),
  timeout_ms: z.number().int().min(STEP_LIMITS.timeoutMs.min).max(STEP_LIMITS.timeoutMs.max).optional(),
  retries: z.number().int().min(STEP_LIMITS.retries.min).max(STEP_LIMITS.retries.max).optional(),
});
export const portableWorkflow = z.strictObject({ name: z.string().min(1).max(200), steps: z.array(step).max(100) });
export const workflowDocument = z.strictObject({
  format: z.literal(FORMAT),
  version: z.literal(1),
  exported_at: z.string().optional(),
  workflows: z.array(portableWorkflow).min(1).max(100),
});
type Portable = z.output<typeof portableWorkflow>;
type Definition = { id: string; name: string; steps: Portable['steps'] };

/** A definition in the Serverless Workflow DSL 1.0: each step a call of a kernel task, in order. */
export function serverlessWorkflow(w: Portable): Record<string, unknown> {
  return {
    document: { dsl: '1.0.0', namespace: 'platform-control', name: w.name.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '') || 'workflow', version: '1.0.0', title: w.name },
    do: w.steps.map((s) => ({
      [s.id]: {
        call: 'platform-control:kernel-task',
        with: { kernel: s.kernel, task: s.task, input: s.input ?? {} },
        ...(s.timeout_ms ? { timeout: { after: { milliseconds: s.timeout_ms } } } : {}),
        ...(s.retries ? { metadata: { retries: s.retries } } : {}),
      },
    })),
  };
}

const portable = (d: Definition): Portable => ({
  name: d.name,
  steps: d.steps.map((s) => ({ id: s.id, kernel: s.kernel, task: s.task, input: s.input ?? {}, ...(s.timeout_ms !== undefined ? { timeout_ms: s.timeout_ms } : {}), ...(s.retries !== undefined ? { retries: s.retries } : {}) })),
});

function unreachable(status: number, body: unknown): Error {
  if (status === 404) return new Unavailable('the workflows plugin is not loaded on this host', undefined, 'NOT_LOADED');
  const detail = body && typeof body === 'object' && 'detail' in body ? (body as { detail: unknown }).detail : body;
  return new HttpError(status >= 500 ? 503 : status, detail);
}

/** The caller's workflow definitions (all, or the given ids; 404 for an id not theirs), through the workflows API. */
export async function exportWorkflows(base: string, token: string, ids: string[] | undefined) {
  const found: Definition[] = [];
  let cursor: string | null = null;
  do {
    const r = await callSelf(base, 'GET', `/ops/workflows/definitions?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
    if (r.status !== 200) throw unreachable(r.status, r.body);
    const page = r.body as { definitions: Definition[]; next_cursor: string | null };
    found.push(...page.definitions);
    cursor = page.next_cursor;
  } while (cursor);
  const byId = new Map(found.map((d) => [d.id, d]));
  const chosen = ids ? ids.map((id) => byId.get(id) ?? (() => { throw new NotFound(`workflow ${id} not found`); })()) : found.reverse();
  return chosen.map((d) => ({ id: d.id, ...portable(d), serverless_workflow: serverlessWorkflow(portable(d)) }));
}

/** Creates each workflow of a document through the workflows API (which checks kernels, tasks and inputs). */
export async function importWorkflows(base: string, token: string, doc: z.output<typeof workflowDocument>) {
  const created: Array<{ id: string; name: string }> = [];
  for (const [i, w] of doc.workflows.entries()) {
    const r = await callSelf(base, 'POST', '/workflows', { token, body: w });
    if (r.status === 201) {
      created.push({ id: (r.body as Definition).id, name: w.name });
      continue;
    }
    if (r.status === 422) {
      const issues = ((r.body as { detail: Array<{ loc: Array<string | number>; msg: string; type: string }> }).detail ?? []).map((x) => ({ ...x, loc: ['body', 'workflows', i, ...x.loc.slice(1)] }));
      throw new HttpError(422, [...issues, ...(created.length ? [{ loc: ['body', 'workflows'], msg: `workflows before this one were imported: ${created.map((c) => c.id).join(', ')}`, type: 'partial_import' }] : [])]);
    }
    throw unreachable(r.status, r.body);
  }
  return created;
}
