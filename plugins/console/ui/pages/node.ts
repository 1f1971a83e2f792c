// One node: its threads, counters and its drain's progress, live.
import { api } from '../api';
import { badge, fill, h, num, pct, table, time } from '../dom';
import { nodeActions } from './actions';
import { liveLoad } from './mesh';

export function nodePage(main: HTMLElement, id: string): () => void {
  const body = h('div', {});
  fill(main, h('p', {}, h('a', { href: '#/mesh' }, '← Mesh')), h('h2', {}, `Node ${id}`), body);
  return liveLoad(async () => {
    // The client's types, generated from the OpenAPI document.
    const [n, d] = await Promise.all([api.node(id), api.drainStatus(id)]);
    fill(
      body,
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Kernel'),
        h('dd', {}, n.kernel_id),
        h('dt', {}, 'State'),
        h('dd', { id: 'node-state' }, badge(n.state), ` since ${time(n.state_since)}`),
        h('dt', {}, 'Health'),
        h('dd', {}, badge(n.health), ` ${n.reason}`),
        h('dt', {}, 'In flight / queued'),
        h('dd', {}, `${num(n.in_flight)} / ${num(n.queued)}`),
        h('dt', {}, 'Tasks run / failed'),
        h('dd', {}, `${num(n.tasks_run)} / ${num(n.tasks_failed)}`),
      ),
      h('div', { class: 'actions' }, nodeActions(n)),
      h('h3', {}, 'Drain'),
      d.started_at
        ? h(
            'div',
            { class: 'drain' },
            h('label', { for: 'drain-progress' }, `Progress ${pct(d.progress, 0)} (${d.completed} finished, ${d.in_flight} in flight)`),
            h('progress', { id: 'drain-progress', max: 1, value: d.progress }),
            h('p', {}, `Started ${time(d.started_at)}; deadline ${time(d.deadline)}${d.force ? ' (forced at the deadline)' : ''}${d.overdue ? '; overdue' : ''}${d.completed_at ? `; completed ${time(d.completed_at)}` : ''}`),
          )
        : h('p', { class: 'muted' }, 'No drain has been started on this node.'),
      h('h3', {}, 'Threads'),
      table(
        'Live threads',
        [
          { label: 'Thread', cell: (t) => t.thread_id },
          { label: 'Last heartbeat', cell: (t) => time(t.last_heartbeat_at) },
          { label: 'Loop delay p99 (ms)', cell: (t) => num(t.loop_delay_p99_ms, 1), numeric: true },
          { label: 'Heap used (MiB)', cell: (t) => (t.heap_used_bytes === null ? '–' : num(t.heap_used_bytes / 1048576, 1)), numeric: true },
        ],
        n.live_threads,
        'no live threads',
      ),
    );
  });
}
