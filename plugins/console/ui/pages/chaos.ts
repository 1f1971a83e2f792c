// Chaos: scenarios (run), experiments (abort a running one) and the emergency halt.
import { api, can } from '../api';
import { badge, confirmAction, fill, h, num, table, time } from '../dom';
import { act } from './actions';
import { onEvents } from './incidents';

interface Scenario {
  scenario_id: string;
  name: string;
  injection_type: string;
  target_domains: string[];
  duration_seconds: number;
  hypothesis: { description: string };
}
interface Experiment {
  experiment_id: string;
  scenario_name: string;
  status: string;
  phase: string;
  deviated: boolean | null;
  reason: string | null;
  steady_state: { before: { held: boolean } | null; during: { held: boolean } | null; after: { held: boolean } | null };
  time_to_recover_ms: number | null;
  started_at: string;
  ended_at: string | null;
}

export function chaosPage(main: HTMLElement): () => void {
  const top = h('div', { class: 'actions' });
  const scenarios = h('div', {});
  const experiments = h('div', {});
  const operator = can('operator');
  if (operator) {
    top.append(h('button', { type: 'button', class: 'danger', onclick: () => void confirmAction('Halt every experiment?', 'Every running experiment of this host is aborted and its injections removed.').then((ok) => ok && act('Halt', api.halt)) }, 'Halt all experiments'));
  }
  fill(main, h('h2', {}, 'Chaos experiments'), top, scenarios, h('h3', {}, 'Experiments'), experiments);
  return onEvents(['chaos_experiment'], async () => {
    const [{ scenarios: list }, { experiments: runs }]: [{ scenarios: Scenario[] }, { experiments: Experiment[] }] = await Promise.all([api.scenarios(), api.experiments()]);
    fill(
      scenarios,
      table(
        'Scenarios',
        [
          { label: 'Name', cell: (s) => s.name },
          { label: 'Injection', cell: (s) => s.injection_type },
          { label: 'Domains', cell: (s) => s.target_domains.join(', ') },
          { label: 'Duration (s)', cell: (s) => num(s.duration_seconds), numeric: true },
          { label: 'Hypothesis', cell: (s) => s.hypothesis.description },
          { label: 'Actions', cell: (s) => (operator ? h('button', { type: 'button', class: 'small danger', 'aria-label': `Run ${s.name}`, onclick: () => void confirmAction(`Run "${s.name}"?`, `Faults are injected into ${s.target_domains.join(', ')} for ${s.duration_seconds} s.`).then((ok) => ok && act(`Run ${s.name}`, () => api.runScenario(s.scenario_id))) }, 'Run') : null) },
        ],
        list,
      ),
    );
    fill(
      experiments,
      table(
        'Experiments, newest first',
        [
          { label: 'Scenario', cell: (e) => e.scenario_name },
          { label: 'Status', cell: (e) => badge(e.status) },
          { label: 'Phase', cell: (e) => e.phase },
          { label: 'Steady state held: before / during / after', cell: (e) => [e.steady_state.before, e.steady_state.during, e.steady_state.after].map((m) => (m ? (m.held ? 'yes' : 'no') : '–')).join(' / ') },
          { label: 'Deviated', cell: (e) => (e.deviated === null ? '–' : e.deviated ? `yes: ${e.reason ?? ''}` : 'no') },
          { label: 'Recovered in (ms)', cell: (e) => num(e.time_to_recover_ms), numeric: true },
          { label: 'Started', cell: (e) => time(e.started_at) },
          { label: 'Actions', cell: (e) => (operator && e.status === 'running' ? h('button', { type: 'button', class: 'small danger', onclick: () => void confirmAction('Abort this experiment?', 'Its injections are removed at once.').then((ok) => ok && act('Abort', () => api.abortExperiment(e.experiment_id))) }, 'Abort') : null) },
        ],
        runs,
        'none run yet',
      ),
    );
  });
}
