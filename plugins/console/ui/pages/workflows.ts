// Workflow definitions (run one) and executions (cancel a running one), refreshed on
// workflow_status events.
import { api, can } from '../api';
import { badge, confirmAction, fill, h, num, table, time } from '../dom';
import { act } from './actions';
import { onEvents } from './incidents';

interface Definition {
  id: string;
  name: string;
  steps: Array<{ id: string; kernel: string; task: string }>;
  created_at: string;
}
interface Execution {
  id: string;
  workflow_name: string;
  state: string;
  error: string | null;
  steps: Array<{ id: string; state: string; duration_ms: number | null }>;
  created_at: string;
  finished_at: string | null;
}

export function workflowsPage(main: HTMLElement): () => void {
  const defs = h('div', {});
  const runs = h('div', {});
  fill(main, h('h2', {}, 'Workflows'), defs, h('h3', {}, 'Runs'), runs);
  return onEvents(['workflow_status'], async () => {
    const [{ definitions }, { executions }]: [{ definitions: Definition[] }, { executions: Execution[] }] = await Promise.all([api.definitions(), api.executions()]);
    fill(
      defs,
      table(
        'Definitions',
        [
          { label: 'Name', cell: (d) => d.name },
          { label: 'Steps', cell: (d) => d.steps.map((s) => `${s.id} (${s.kernel}.${s.task})`).join(' → ') },
          { label: 'Created', cell: (d) => time(d.created_at) },
          { label: 'Actions', cell: (d) => (can('member') ? h('button', { type: 'button', class: 'small', 'aria-label': `Run ${d.name}`, onclick: () => void confirmAction(`Run ${d.name}?`, 'Its steps run on the kernels now.').then((ok) => ok && act(`Run ${d.name}`, () => api.runWorkflow(d.id))) }, 'Run') : null) },
        ],
        definitions,
        'none defined',
      ),
    );
    fill(
      runs,
      table(
        'Executions, newest first',
        [
          { label: 'Workflow', cell: (e) => e.workflow_name },
          { label: 'State', cell: (e) => badge(e.state) },
          { label: 'Steps', cell: (e) => e.steps.map((s) => h('span', { class: 'step' }, `${s.id} `, badge(s.state), s.duration_ms === null ? '' : ` ${num(s.duration_ms)} ms`)) },
          { label: 'Started', cell: (e) => time(e.created_at) },
          { label: 'Finished', cell: (e) => time(e.finished_at) },
          { label: 'Error', cell: (e) => e.error ?? '' },
          { label: 'Actions', cell: (e) => (can('member') && ['pending', 'running'].includes(e.state) ? h('button', { type: 'button', class: 'small danger', onclick: () => void confirmAction('Cancel this run?', 'Its running step is aborted.').then((ok) => ok && act('Cancel', () => api.cancelExecution(e.id))) }, 'Cancel') : null) },
        ],
        executions,
        'no runs yet',
      ),
    );
  });
}
