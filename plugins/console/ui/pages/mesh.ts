// The live mesh: kernels and their nodes, read from /ops/kernels and read again whenever
// the stream reports a change of state, health, breaker or drain progress.
import { api, stream } from '../api';
import { badge, fill, h, num, say } from '../dom';
import { kernelActions, nodeActions, type NodeView } from './actions';

interface KernelView {
  id: string;
  description: string;
  state: string;
  health: string;
  reason: string;
  breaker: { state: string; isolated: boolean };
  nodes: NodeView[];
}

const MESH_EVENTS = new Set(['snapshot', 'node_state', 'kernel_state', 'drain_progress', 'breaker_state', 'health_update']);

/** Calls `load` now and again (at most every 250 ms) after each mesh event. */
export function liveLoad(load: () => Promise<void>): () => void {
  let pending: number | undefined;
  const run = () => void load().catch((err: unknown) => say(String((err as Error).message ?? err), 'error'));
  const off = stream.on((e) => {
    if (!MESH_EVENTS.has(e.type) || pending !== undefined) return;
    pending = window.setTimeout(() => {
      pending = undefined;
      run();
    }, 250);
  });
  // Heartbeats change threads' figures without an event: refresh them every 5 s too.
  const every = window.setInterval(run, 5000);
  run();
  return () => {
    off();
    window.clearTimeout(pending);
    window.clearInterval(every);
  };
}

function nodeRow(n: NodeView): HTMLElement {
  const live = n.live_threads.length;
  return h(
    'tr',
    { 'data-node': n.id },
    h('th', { scope: 'row' }, h('a', { href: `#/nodes/${encodeURIComponent(n.id)}` }, n.id)),
    h('td', { class: 'state' }, badge(n.state)),
    h('td', {}, badge(n.health), ' ', h('span', { class: 'muted' }, n.reason)),
    h('td', { class: 'n' }, `${live}/${n.threads}`),
    h('td', { class: 'n' }, num(n.in_flight)),
    h('td', { class: 'n' }, num(n.queued)),
    h('td', { class: 'n' }, `${num(n.tasks_run)} / ${num(n.tasks_failed)}`),
    h('td', { class: 'actions' }, nodeActions(n)),
  );
}

function kernelSection(k: KernelView): HTMLElement {
  return h(
    'section',
    { class: 'kernel', 'aria-labelledby': `k-${k.id}` },
    h(
      'div',
      { class: 'kernel-head' },
      h('h3', { id: `k-${k.id}` }, k.id),
      badge(k.state),
      badge(k.health),
      h('span', { class: 'muted' }, k.reason),
      h('span', {}, 'breaker ', badge(k.breaker.state), k.breaker.isolated ? badge('isolated') : null),
      h('span', { class: 'actions' }, kernelActions(k)),
    ),
    h('p', { class: 'muted' }, k.description),
    h(
      'table',
      {},
      h('caption', { class: 'sr-only' }, `Nodes of ${k.id}`),
      h('thead', {}, h('tr', {}, ['Node', 'State', 'Health', 'Threads', 'In flight', 'Queued', 'Run / failed', 'Actions'].map((c, i) => h('th', { scope: 'col', class: i >= 3 && i <= 6 ? 'n' : null }, c)))),
      h('tbody', {}, k.nodes.map(nodeRow)),
    ),
  );
}

export function meshPage(main: HTMLElement): () => void {
  const summary = h('p', { class: 'summary' });
  const body = h('div', {});
  fill(main, h('h2', {}, 'Mesh'), summary, body);
  return liveLoad(async () => {
    const [{ kernels }, overview] = await Promise.all([api.kernels(), api.overview()]);
    const byState = Object.entries(overview.registry.by_state).map(([s, n]) => `${n} ${s}`).join(', ');
    fill(summary, `${overview.registry.total_nodes} nodes (${byState}); mesh `, badge(overview.health.global_state), ` ${overview.health.reason}`);
    // Focus stays where it was: the table is rebuilt only when a figure changed.
    const next = kernels.map(kernelSection);
    const html = next.map((n) => n.outerHTML).join('');
    if (body.dataset.html === html) return;
    const focused = document.activeElement?.getAttribute('aria-label');
    fill(body, next);
    body.dataset.html = html;
    if (focused) (body.querySelector(`[aria-label="${CSS.escape(focused)}"]`) as HTMLElement | null)?.focus();
  });
}
