// Mesh control buttons (node and kernel), shown to operators, each behind a confirmation.
import { ApiError, api, can } from '../api';
import { confirmAction, field, h, say } from '../dom';

export interface NodeView {
  id: string;
  kernel_id: string;
  state: string;
  health: string;
  reason: string;
  threads: number;
  live_threads: Array<{ thread_id: number; last_heartbeat_at: string | null; loop_delay_p99_ms: number | null; heap_used_bytes: number | null }>;
  in_flight: number;
  queued: number;
  tasks_run: number;
  tasks_failed: number;
  state_since: string;
}

/** Runs an action and says how it went in the status bar (the refusal's code included). */
export async function act(label: string, run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
    say(`${label}: done`);
  } catch (err) {
    say(`${label}: ${err instanceof ApiError ? `${err.message} (${err.code})` : String(err)}`, 'error');
  }
}

function drainFields(): HTMLElement[] {
  return [
    field('Deadline (seconds)', h('input', { name: 'deadline', type: 'number', min: 1, max: 86400, value: 60, required: true })),
    h('div', { class: 'field check' }, h('input', { id: 'f-force', name: 'force', type: 'checkbox' }), h('label', { for: 'f-force' }, 'Force: abort tasks still running at the deadline')),
  ];
}

function drainOptions(f: FormData): { deadline_seconds: number; force: boolean } {
  return { deadline_seconds: Number(f.get('deadline')), force: f.get('force') === 'on' };
}

function button(label: string, target: string, onclick: () => void, danger = false): HTMLElement {
  return h('button', { type: 'button', class: danger ? 'small danger' : 'small', 'aria-label': `${label} ${target}`, onclick }, label);
}

/** The actions a node's state allows (docs/mesh.md); empty for viewers and members. */
export function nodeActions(n: { id: string; state: string }): HTMLElement[] {
  if (!can('operator')) return [];
  const simple = (label: string, run: (id: string) => Promise<unknown>, text: string) =>
    button(label, n.id, () => void confirmAction(`${label} ${n.id}?`, text).then((ok) => ok && act(`${label} ${n.id}`, () => run(n.id))));
  const drain = button(
    'Drain',
    n.id,
    () =>
      void confirmAction(`Drain ${n.id}?`, 'The node takes no new tasks and its threads end when its in-flight tasks are done.', drainFields()).then(
        (f) => f && act(`Drain ${n.id}`, () => api.drainNode(n.id, drainOptions(f))),
      ),
    true,
  );
  const complete = button(
    'Complete drain',
    n.id,
    () =>
      void confirmAction(`Complete the drain of ${n.id}?`, 'Terminates its threads; refused while tasks are in flight unless forced.', [
        h('div', { class: 'field check' }, h('input', { id: 'f-cforce', name: 'force', type: 'checkbox' }), h('label', { for: 'f-cforce' }, 'Force: abort in-flight tasks')),
      ]).then((f) => f && act(`Complete drain of ${n.id}`, () => api.completeDrain(n.id, f.get('force') === 'on'))),
    true,
  );
  switch (n.state) {
    case 'active':
      return [simple('Pause', api.pauseNode, 'The node takes no new tasks; in-flight tasks go on.'), drain];
    case 'paused':
      return [simple('Resume', api.resumeNode, 'The node takes tasks again.'), drain];
    case 'draining':
      return [complete, simple('Abort drain', api.abortDrain, 'The node returns to active.')];
    case 'drained':
      return [simple('Resume', api.resumeNode, 'The node gets fresh threads and takes tasks again.')];
    default:
      return [];
  }
}

/** Pause, resume and drain for every node of a kernel. */
export function kernelActions(k: { id: string }): HTMLElement[] {
  if (!can('operator')) return [];
  return [
    button('Pause all', k.id, () => void confirmAction(`Pause kernel ${k.id}?`, 'Every node of the kernel stops taking tasks.').then((ok) => ok && act(`Pause ${k.id}`, () => api.pauseKernel(k.id)))),
    button('Resume all', k.id, () => void confirmAction(`Resume kernel ${k.id}?`, 'Every paused or drained node takes tasks again.').then((ok) => ok && act(`Resume ${k.id}`, () => api.resumeKernel(k.id)))),
    button(
      'Drain all',
      k.id,
      () =>
        void confirmAction(`Drain kernel ${k.id}?`, 'Every active or paused node of the kernel drains.', drainFields()).then(
          (f) => f && act(`Drain ${k.id}`, () => api.drainKernel(k.id, drainOptions(f))),
        ),
      true,
    ),
  ];
}
