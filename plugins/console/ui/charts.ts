// SVG charts drawn from figures the query APIs returned: bars, a line over time windows and
// a trace's waterfall. Each chart is a figure with a caption and a text alternative.
import { h, s } from './dom';

const W = 640;

function figure(caption: string, svg: SVGElement, summary: string): HTMLElement {
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', `${caption}: ${summary}`);
  return h('figure', { class: 'chart' }, svg as unknown as HTMLElement, h('figcaption', {}, caption));
}

export function barChart(caption: string, bars: Array<{ label: string; value: number }>, fmt: (v: number) => string): HTMLElement {
  if (!bars.length) return h('p', { class: 'empty' }, `${caption}: no data in this window.`);
  const row = 24;
  const left = 140;
  const max = Math.max(...bars.map((b) => b.value), 0) || 1;
  const svg = s('svg', { viewBox: `0 0 ${W} ${bars.length * row + 8}`, width: W });
  bars.forEach((b, i) => {
    const y = i * row + 4;
    const w = ((W - left - 80) * b.value) / max;
    svg.append(
      s('text', { x: left - 8, y: y + 15, 'text-anchor': 'end', class: 'axis' }, b.label),
      s('rect', { x: left, y, width: Math.max(w, 1), height: row - 8, class: 'bar' }),
      s('text', { x: left + w + 6, y: y + 15, class: 'value' }, fmt(b.value)),
    );
  });
  return figure(caption, svg, bars.map((b) => `${b.label} ${fmt(b.value)}`).join(', '));
}

/** A line over consecutive windows; a null point (no data in that window) breaks the line. */
export function lineChart(caption: string, points: Array<{ label: string; value: number | null }>, fmt: (v: number) => string): HTMLElement {
  const known = points.filter((p) => p.value !== null) as Array<{ label: string; value: number }>;
  if (!known.length) return h('p', { class: 'empty' }, `${caption}: no data in this window.`);
  const H = 160;
  const pad = { l: 56, r: 12, t: 10, b: 24 };
  const max = Math.max(...known.map((p) => p.value)) || 1;
  const x = (i: number) => pad.l + ((W - pad.l - pad.r) * i) / Math.max(points.length - 1, 1);
  const y = (v: number) => pad.t + (H - pad.t - pad.b) * (1 - v / max);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, width: W });
  svg.append(
    s('line', { x1: pad.l, y1: y(0), x2: W - pad.r, y2: y(0), class: 'grid' }),
    s('line', { x1: pad.l, y1: y(max), x2: W - pad.r, y2: y(max), class: 'grid' }),
    s('text', { x: pad.l - 6, y: y(max) + 4, 'text-anchor': 'end', class: 'axis' }, fmt(max)),
    s('text', { x: pad.l - 6, y: y(0) + 4, 'text-anchor': 'end', class: 'axis' }, '0'),
    s('text', { x: pad.l, y: H - 6, class: 'axis' }, points[0].label),
    s('text', { x: W - pad.r, y: H - 6, 'text-anchor': 'end', class: 'axis' }, points[points.length - 1].label),
  );
  let d = '';
  points.forEach((p, i) => {
    if (p.value === null) {
      d += ' ';
      return;
    }
    d += `${d.endsWith(' ') || d === '' ? 'M' : 'L'}${x(i).toFixed(1)},${y(p.value).toFixed(1)}`;
    svg.append(s('circle', { cx: x(i), cy: y(p.value), r: 3, class: 'dot' }, s('title', {}, `${p.label}: ${fmt(p.value)}`)));
  });
  svg.prepend(s('path', { d: d.trim().replace(/ +/g, ' '), class: 'line' }));
  return figure(caption, svg, known.map((p) => `${p.label} ${fmt(p.value)}`).join(', '));
}

export interface Span {
  span_id: string;
  name: string;
  type: string;
  status: string;
  start: string;
  duration_ms: number;
  event: Record<string, unknown>;
  children: Span[];
}

/** The span's name with what it ran (a model, a task), when the event says. */
function spanLabel(sp: Span): string {
  const what = sp.event.request_model ?? sp.event.model ?? sp.event.task ?? sp.event.policy_id;
  return typeof what === 'string' && what !== sp.name ? `${sp.name} ${what}` : sp.name;
}

/** A trace's spans as bars on one time axis, indented by depth, in start order. */
export function waterfall(caption: string, roots: Span[], traceStart: string, totalMs: number): HTMLElement {
  const W = 960;
  const rows: Array<{ span: Span; depth: number }> = [];
  const walk = (list: Span[], depth: number) => {
    for (const sp of list) {
      rows.push({ span: sp, depth });
      walk(sp.children, depth + 1);
    }
  };
  walk(roots, 0);
  const row = 22;
  const left = 220;
  const t0 = Date.parse(traceStart);
  const total = totalMs || 1;
  const svg = s('svg', { viewBox: `0 0 ${W} ${rows.length * row + 20}`, width: W });
  svg.append(s('text', { x: left, y: 12, class: 'axis' }, '0 ms'), s('text', { x: W - 4, y: 12, 'text-anchor': 'end', class: 'axis' }, `${totalMs.toFixed(1)} ms`));
  rows.forEach(({ span, depth }, i) => {
    const y = i * row + 18;
    const x = left + ((W - left - 4) * (Date.parse(span.start) - t0)) / total;
    const w = Math.max(((W - left - 4) * span.duration_ms) / total, 2);
    svg.append(
      s('text', { x: 4 + depth * 12, y: y + 14, class: 'axis' }, spanLabel(span).slice(0, 30 - depth * 2)),
      s('rect', { x, y: y + 3, width: w, height: row - 8, class: span.status === 'error' ? 'bar err' : 'bar' }, s('title', {}, `${spanLabel(span)} (${span.type}) ${span.duration_ms} ms, ${span.status}`)),
    );
  });
  return figure(caption, svg, rows.map(({ span }) => `${spanLabel(span)} ${span.duration_ms} ms ${span.status}`).join('; '));
}
