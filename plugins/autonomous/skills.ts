// Skill blueprints made from opportunities. A workflow skill is a stored workflow definition
// (created through the workflows service, so it is checked like any other); an actions skill
// is a sequence of governed platform actions whose targets are its inputs.
import { invalid } from '../../core/errors';
import type { Caller } from '../../core/roles';
import type { Governance } from '../../core/contracts/governance';
import type { WorkflowStep, Workflows } from '../../core/contracts/workflows';
import { notAutomatable } from './errors';

export interface SkillDraft {
  kind: 'workflow' | 'actions';
  name: string;
  workflow_id: string | null;
  steps: unknown[];
  inputs: Array<{ name: string; description: string; example: string | null }>;
}

export interface Opportunity {
  id: string;
  kind: string;
  title: string;
  evidence: Record<string, any>;
}

const MAX_RETRIES = 5;

export async function draftSkill(caller: Caller, o: Opportunity, name: string | undefined, workflows: Workflows, governance: Governance): Promise<SkillDraft> {
  if (o.kind === 'failing_workflow') {
    const def = await workflows.definition(caller, o.evidence.workflow_id);
    const failing = new Set(Object.keys(o.evidence.failed_steps ?? {}));
    // Steps that failed get one more attempt each (bounded), the others stay as they are.
    const steps: WorkflowStep[] = def.steps.map((s) => (failing.has(s.id) ? { ...s, retries: Math.min(MAX_RETRIES, (s.retries ?? 0) + 1) } : s));
    const created = await workflows.create(caller, name ?? `${def.name} (with retries)`, steps);
    return { kind: 'workflow', name: created.name, workflow_id: created.id, steps, inputs: steps.map((s) => ({ name: s.id, description: `input of step ${s.id} (${s.kernel}.${s.task}), fixed in the definition`, example: JSON.stringify(s.input) })) };
  }
  if (o.kind === 'retried_task') {
    const { kernel, task, workflows: ids } = o.evidence as { kernel: string; task: string; workflows: string[] };
    // The input the task was given in the first workflow that retried it.
    const def = await workflows.definition(caller, ids[0]!);
    const step = def.steps.find((s) => s.kernel === kernel && s.task === task);
    if (!step) throw invalid(['body', 'opportunity_id'], `workflow ${def.id} no longer has a ${kernel}.${task} step`);
    const steps: WorkflowStep[] = [{ id: 'task', kernel, task, input: step.input, retries: MAX_RETRIES, ...(step.timeout_ms ? { timeout_ms: step.timeout_ms } : {}) }];
    const created = await workflows.create(caller, name ?? `${kernel}.${task} with retries`, steps);
    return { kind: 'workflow', name: created.name, workflow_id: created.id, steps, inputs: [{ name: 'task', description: `input of ${kernel}.${task}, fixed in the definition`, example: JSON.stringify(step.input) }] };
  }
  // manual_sequence: each action must be a governed operation an agent can propose.
  const sequence = o.evidence.sequence as string[];
  const known = new Set(governance.kinds().map((k) => k.kind));
  const missing = sequence.filter((a) => !known.has(a));
  if (missing.length) throw notAutomatable(`${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not a governed action an agent can run; governed: ${[...known].sort().join(', ')}`);
  const examples = (o.evidence.recent_targets as string[][] | undefined)?.at(-1) ?? [];
  return {
    kind: 'actions',
    name: name ?? sequence.join(' → '),
    workflow_id: null,
    steps: sequence.map((kind, i) => ({ kind, target: `{target_${i + 1}}` })),
    inputs: sequence.map((kind, i) => ({ name: `target_${i + 1}`, description: `target of ${kind}`, example: examples[i]?.split(':').slice(1).join(':') ?? null })),
  };
}
