export type Format = 'table' | 'json';

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** Aligned columns for people. */
export function table<T>(rows: T[], columns: Array<Column<T>>): string {
  const cells = rows.map((r) => columns.map((c) => cell(c.value(r))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i].length)));
  const line = (vals: string[]) => vals.map((v, i) => (i === vals.length - 1 ? v : v.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n') + '\n';
}

/** `key: value` lines for one object. */
export function fields(obj: Record<string, unknown>, keys?: string[]): string {
  const ks = keys ?? Object.keys(obj);
  const width = Math.max(...ks.map((k) => k.length));
  return ks.map((k) => `${k.padEnd(width)}  ${cell(obj[k])}`).join('\n') + '\n';
}

export function out(text: string): void {
  process.stdout.write(text);
}

export function json(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/**
 * A progress bar on stderr, drawn only when stderr is a terminal (a pipe or a log file gets
 * nothing, so scripts parse stdout and stderr alone).
 */
export class Progress {
  private readonly on = Boolean(process.stderr.isTTY);
  private drawn = false;

  update(fraction: number, text: string): void {
    if (!this.on) return;
    const f = Math.max(0, Math.min(1, fraction));
    const width = 30;
    const full = Math.round(f * width);
    process.stderr.write(`\r[${'#'.repeat(full)}${'-'.repeat(width - full)}] ${String(Math.round(f * 100)).padStart(3)}% ${text}\x1b[K`);
    this.drawn = true;
  }

  done(): void {
    if (this.drawn) process.stderr.write('\n');
    this.drawn = false;
  }
}
