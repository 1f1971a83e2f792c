// Telemetry: stored events (filtered by type), LLM call charts from the metric query API,
// and one trace as a waterfall.
import { api } from '../api';
import { barChart, lineChart, waterfall, type Span } from '../charts';
import { badge, field, fill, h, num, say, table, time } from '../dom';

const TYPES = ['llm-call', 'kernel', 'policy', 'outcome', 'evaluation'] as const;

type Event = Record<string, any>;

function label(e: Event): string {
  return String(e.request_model ?? e.model ?? e.task ?? e.policy_id ?? e.name ?? e.metric ?? e.operation ?? '');
}

interface LlmMetrics {
  totals: { count: number };
  groups: Array<{ key: Record<string, string | null>; count: number; latency_ms: { p95: number | null }; cost_usd: number }>;
}

/** LLM calls per five minutes over the last hour: one metric query a window. */
async function perWindow(): Promise<Array<{ label: string; count: number; p95: number | null }>> {
  const step = 5 * 60_000;
  const end = Math.ceil(Date.now() / step) * step;
  const windows = Array.from({ length: 12 }, (_, i) => end - (12 - i) * step);
  return Promise.all(
    windows.map(async (since) => {
      const r: LlmMetrics = await api.llmCalls({ since: new Date(since).toISOString(), until: new Date(since + step).toISOString() });
      const p95 = r.groups.length ? Math.max(...r.groups.map((g) => g.latency_ms.p95 ?? 0)) : null;
      return { label: new Date(since).toISOString().slice(11, 16), count: r.totals.count, p95 };
    }),
  );
}

export function telemetryPage(main: HTMLElement): void {
  const type = h('select', { name: 'type' }, h('option', { value: '' }, 'all types'), TYPES.map((t) => h('option', { value: t }, t)));
  const events = h('div', {});
  const charts = h('div', { class: 'charts' });
  const trace = h('input', { name: 'trace', pattern: '[0-9a-fA-F]{32}', placeholder: '32 hex characters', required: true });
  const open = h('form', { class: 'inline' }, field('Trace id', trace), h('button', { type: 'submit' }, 'Open trace'));
  open.addEventListener('submit', (ev) => {
    ev.preventDefault();
    location.hash = `#/traces/${trace.value.toLowerCase()}`;
  });
  const loadEvents = async () => {
    const r = await api.events((type.value || undefined) as (typeof TYPES)[number] | undefined);
    fill(
      events,
      table(
        'Latest events',
        [
          { label: 'Time', cell: (e) => time(e.timestamp) },
          { label: 'Type', cell: (e) => e.type },
          { label: 'What', cell: (e) => label(e) },
          { label: 'Kernel', cell: (e) => e.kernel ?? '' },
          { label: 'Status', cell: (e) => badge(e.status) },
          { label: 'Duration (ms)', cell: (e) => num(e.duration_ms, 1), numeric: true },
          { label: 'Trace', cell: (e) => (e.trace_id ? h('a', { href: `#/traces/${e.trace_id}`, 'aria-label': `Trace ${e.trace_id}` }, String(e.trace_id).slice(0, 8)) : '') },
        ],
        // Events are open records in the document (each type has its own fields).
        r.events as Event[],
        'none stored',
      ),
    );
  };
  type.addEventListener('change', () => void loadEvents());
  const loadCharts = async () => {
    const [byModel, windows]: [LlmMetrics, Awaited<ReturnType<typeof perWindow>>] = await Promise.all([api.llmCalls({ group_by: 'model' }), perWindow()]);
    const model = (g: LlmMetrics['groups'][number]) => g.key.model ?? '(none)';
    fill(
      charts,
      lineChart('LLM calls per 5 minutes, last hour', windows.map((w) => ({ label: w.label, value: w.count })), (v) => num(v)),
      lineChart('LLM call latency p95 (ms, slowest model) per 5 minutes', windows.map((w) => ({ label: w.label, value: w.p95 })), (v) => num(v, 1)),
      barChart('LLM calls by model, last hour', byModel.groups.map((g) => ({ label: model(g), value: g.count })), (v) => num(v)),
      barChart('LLM cost by model (USD), last hour', byModel.groups.map((g) => ({ label: model(g), value: g.cost_usd })), (v) => `$${num(v, 4)}`),
    );
  };
  fill(main, h('h2', {}, 'Telemetry'), open, h('h3', {}, 'Events'), field('Event type', type), events, h('h3', {}, 'Metrics'), charts);
  const fail = (err: unknown) => say((err as Error).message, 'error');
  loadEvents().catch(fail);
  loadCharts().catch(fail);
}

interface Trace {
  trace_id: string;
  span_count: number;
  start: string;
  duration_ms: number;
  truncated: boolean;
  spans: Span[];
}

export function tracePage(main: HTMLElement, id: string): void {
  const body = h('div', {});
  fill(main, h('p', {}, h('a', { href: '#/telemetry' }, '← Telemetry')), h('h2', {}, `Trace ${id}`), body);
  // The document names span children loosely (its generator does not follow recursive
  // schemas); they have the span's shape.
  api.trace(id).then(
    (answer) => {
      const t = answer as unknown as Trace;
      fill(
        body,
        h('p', { class: 'summary' }, `${t.span_count} spans over ${num(t.duration_ms, 1)} ms from ${time(t.start)}${t.truncated ? ' (truncated)' : ''}`),
        waterfall('Spans on one time axis', t.spans, t.start, t.duration_ms),
      );
    },
    (err: Error) => fill(body, h('p', { class: 'error', role: 'alert' }, err.message)),
  );
}
