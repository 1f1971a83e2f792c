// Incidents: the active list (refreshed on incident events), one incident with its
// timeline, and mitigate / resolve / close for operators.
import { api, can, stream } from '../api';
import { badge, confirmAction, field, fill, h, say, table, time } from '../dom';
import { act } from './actions';

interface Incident {
  id: string;
  title: string;
  description: string | null;
  severity: string;
  state: string;
  kernel_id: string | null;
  node_id: string | null;
  domain: string | null;
  source: string;
  cause: string | null;
  created_at: string;
  updated_at: string;
  timeline?: Array<{ at: string; kind: string; from_state: string | null; to_state: string | null; source: string; actor: string | null; detail: Record<string, unknown> }>;
}

/** Runs `load` now and after each stream event whose type is in `types`. */
export function onEvents(types: string[], load: () => Promise<void>): () => void {
  const run = () => void load().catch((err: unknown) => say((err as Error).message, 'error'));
  const off = stream.on((e) => types.includes(e.type) && run());
  run();
  return off;
}

export function incidentsPage(main: HTMLElement): () => void {
  const body = h('div', {});
  fill(main, h('h2', {}, 'Active incidents'), body);
  return onEvents(['incident'], async () => {
    const { incidents }: { incidents: Incident[] } = await api.activeIncidents();
    fill(
      body,
      table(
        'Open and mitigated incidents',
        [
          { label: 'Title', cell: (i) => h('a', { href: `#/incident/${i.id}` }, i.title) },
          { label: 'Severity', cell: (i) => badge(i.severity) },
          { label: 'State', cell: (i) => badge(i.state) },
          { label: 'Target', cell: (i) => i.node_id ?? i.kernel_id ?? i.domain ?? '–' },
          { label: 'Source', cell: (i) => i.source },
          { label: 'Opened', cell: (i) => time(i.created_at) },
        ],
        incidents,
        'none active',
      ),
    );
  });
}

const MITIGATIONS = ['pause_kernel', 'isolate_kernel', 'drain_node', 'restart_node'] as const;
type Mitigation = (typeof MITIGATIONS)[number];
const noteOf = (f: FormData) => (f.get('note') as string) || undefined;

function actions(i: Incident, reload: () => void): HTMLElement[] {
  if (!can('operator') || i.state === 'closed') return [];
  const note = () => field('Note', h('textarea', { name: 'note', maxlength: 2000, rows: 3 }));
  const out: HTMLElement[] = [];
  if (i.state === 'open') {
    const select = h('select', { name: 'action' }, MITIGATIONS.map((m) => h('option', { value: m }, m.replace('_', ' '))));
    const target = h('input', { name: 'target', required: true, value: i.node_id ?? i.kernel_id ?? '' });
    out.push(
      h('button', {
        type: 'button',
        onclick: () =>
          void confirmAction('Mitigate this incident?', 'The action runs on the mesh now.', [field('Action', select), field('Target (kernel or node id)', target), note()]).then(
            (f) => f && act('Mitigate', () => api.mitigate(i.id, { action: f.get('action') as Mitigation, target: f.get('target') as string, note: noteOf(f) })).then(reload),
          ),
      }, 'Mitigate…'),
    );
  }
  if (i.state === 'open' || i.state === 'mitigated') {
    out.push(h('button', { type: 'button', onclick: () => void confirmAction('Resolve this incident?', 'It leaves the active list.', [note()]).then((f) => f && act('Resolve', () => api.resolve(i.id, noteOf(f))).then(reload)) }, 'Resolve…'));
  }
  if (i.state === 'resolved') {
    out.push(h('button', { type: 'button', onclick: () => void confirmAction('Close this incident?', 'A closed incident cannot change again.', [note()]).then((f) => f && act('Close', () => api.close(i.id, noteOf(f))).then(reload)) }, 'Close…'));
  }
  return out;
}

/** An entry's note, then its other facts (a mitigation's action and target) in one line. */
function details(d: Record<string, unknown>): HTMLElement | null {
  const rest = Object.entries(d).filter(([k, v]) => k !== 'note' && v !== null && typeof v !== 'object');
  if (!d.note && !rest.length) return null;
  return h('span', { class: 'detail' }, typeof d.note === 'string' ? `: ${d.note}` : '', rest.length ? h('code', {}, ` ${rest.map(([k, v]) => `${k}=${String(v)}`).join(' ')}`) : null);
}

export function incidentPage(main: HTMLElement, id: string): () => void {
  const body = h('div', {});
  fill(main, h('p', {}, h('a', { href: '#/incidents' }, '← Incidents')), body);
  const load = async () => {
    const i: Incident = await api.incident(id);
    fill(
      body,
      h('h2', {}, i.title),
      h('p', {}, badge(i.severity), ' ', badge(i.state), ` ${i.source}; opened ${time(i.created_at)}${i.cause ? `; cause ${i.cause}` : ''}`),
      i.description ? h('p', {}, i.description) : null,
      h('div', { class: 'actions' }, actions(i, () => void load())),
      h('h3', {}, 'Timeline'),
      h(
        'ol',
        { class: 'timeline' },
        (i.timeline ?? []).map((t) =>
          h('li', {}, h('time', { datetime: t.at }, time(t.at)), ' ', h('strong', {}, t.kind), t.to_state ? ` → ${t.to_state}` : '', ` (${t.source})`, details(t.detail)),
        ),
      ),
    );
  };
  return onEvents(['incident'], load);
}
