// A few DOM helpers: the console is small enough not to need a framework.

type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

/** An element with attributes (`on*` are listeners, `false`/null are left out) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

const SVG = 'http://www.w3.org/2000/svg';
/** An SVG element. */
export function s(tag: string, attrs: Record<string, string | number> = {}, ...children: Array<Node | string>): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el as SVGElement;
}

/** Replaces the children of `el`. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** Announces a message to screen readers and shows it in the status bar. */
export function say(text: string, kind: 'ok' | 'error' = 'ok'): void {
  const bar = document.getElementById('status')!;
  bar.className = kind;
  bar.textContent = text;
}

export function badge(value: string | null | undefined): HTMLElement {
  const v = value ?? 'unknown';
  return h('span', { class: `badge b-${v.replace(/[^a-z_]/g, '')}` }, v);
}

export function time(iso: string | null | undefined): string {
  if (!iso) return '–';
  const d = new Date(iso);
  return d.toISOString().replace('T', ' ').slice(0, 19) + 'Z';
}

export function num(n: number | null | undefined, digits = 0): string {
  return n === null || n === undefined ? '–' : n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

export function pct(n: number | null | undefined, digits = 1): string {
  return n === null || n === undefined ? '–' : `${(n * 100).toFixed(digits)}%`;
}

export interface Column<T> {
  label: string;
  cell: (row: T) => Child;
  numeric?: boolean;
}

/** A table with a caption (its accessible name) and a row per item. */
export function table<T>(caption: string, columns: Column<T>[], rows: T[], empty = 'Nothing to show.'): HTMLElement {
  if (!rows.length) return h('p', { class: 'empty' }, `${caption}: ${empty}`);
  return h(
    'table',
    {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', class: c.numeric ? 'n' : null }, c.label)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, columns.map((c) => h('td', { class: c.numeric ? 'n' : null }, c.cell(r)))))),
  );
}

/**
 * Asks before an action, in a modal <dialog> (focus is trapped and Escape cancels); extra
 * fields (a deadline, a note) are read from the form when confirmed.
 */
export function confirmAction(title: string, text: string, fields: HTMLElement[] = []): Promise<FormData | null> {
  return new Promise((resolve) => {
    const form = h(
      'form',
      { method: 'dialog' },
      h('h2', { id: 'dlg-title' }, title),
      h('p', {}, text),
      ...fields,
      h('div', { class: 'actions' }, h('button', { value: 'cancel', type: 'submit', formnovalidate: true }, 'Cancel'), h('button', { value: 'ok', type: 'submit', class: 'danger' }, 'Confirm')),
    );
    const dlg = h('dialog', { 'aria-labelledby': 'dlg-title' }, form);
    document.body.append(dlg);
    dlg.addEventListener('close', () => {
      const ok = dlg.returnValue === 'ok';
      const data = new FormData(form);
      dlg.remove();
      resolve(ok ? data : null);
    });
    dlg.showModal();
    (form.querySelector('input, select, textarea') as HTMLElement | null)?.focus();
  });
}

/** A labelled form control. */
export function field(label: string, control: HTMLElement): HTMLElement {
  const id = control.id || `f-${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  control.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), control);
}
