import fs from 'node:fs';
import readline from 'node:readline';
import { Command } from 'commander';
import { call, contextOf, intOption, type Ctx } from '../context';
import { CliError, EXIT } from '../errors';
import { json, out, Progress, table } from '../output';

const PATHS = {
  'llm-call': '/observability/v1/ingest/llm-call',
  kernel: '/observability/v1/ingest/kernel',
  policy: '/observability/v1/ingest/policy',
  outcome: '/observability/v1/ingest/outcome',
  evaluation: '/observability/v1/ingest/evaluation',
} as const;
type Kind = keyof typeof PATHS;

interface Issue {
  loc?: Array<string | number>;
  msg?: string;
}

export interface Rejection {
  line: number;
  detail: string;
}

export interface IngestSummary {
  kind: Kind;
  lines: number;
  accepted: number;
  duplicates: number;
  rejected: Rejection[];
}

const describe = (issues: Issue[]) => issues.map((i) => `${(i.loc ?? []).slice(3).join('.') || 'event'}: ${i.msg ?? ''}`).join('; ');

/** Sends one batch; an all-invalid batch (422) is reported line by line like a partial one. */
async function send(ctx: Ctx, kind: Kind, batch: Array<{ line: number; event: unknown }>, summary: IngestSummary): Promise<void> {
  const res = await ctx.client
    .POST(PATHS[kind], { body: { events: batch.map((b) => b.event) } as never })
    .catch((err: Error) => {
      throw new CliError(EXIT.server, `cannot reach the service: ${(err as { cause?: Error }).cause?.message ?? err.message}`);
    });
  if (res.response.status === 422) {
    const issues = ((res.error as { detail?: Issue[] } | undefined)?.detail ?? []) as Issue[];
    const byIndex = new Map<number, Issue[]>();
    for (const i of issues) {
      const idx = typeof i.loc?.[2] === 'number' ? i.loc[2] : -1;
      byIndex.set(idx, [...(byIndex.get(idx) ?? []), i]);
    }
    for (const [idx, list] of byIndex) summary.rejected.push({ line: batch[idx]?.line ?? batch[0].line, detail: describe(list) });
    return;
  }
  const data = await call(Promise.resolve(res));
  const r = data as { accepted: number; duplicates: number; rejected: Array<{ index: number; detail: Issue[] }> };
  summary.accepted += r.accepted;
  summary.duplicates += r.duplicates;
  for (const x of r.rejected) summary.rejected.push({ line: batch[x.index].line, detail: describe(x.detail) });
}

export function ingestCommand(): Command {
  return new Command('ingest')
    .description('send telemetry events, one JSON object a line, from stdin (or --file) in batches')
    .argument('<kind>', `event kind: ${Object.keys(PATHS).join(', ')}`)
    .option('--file <path>', 'read this file instead of stdin')
    .option('--batch <n>', 'events a request (at most the service\'s telemetry.maxBatch, 1000 by default)', intOption('--batch'), 500)
    .action(async (kind: string, o: { file?: string; batch: number }, cmd: Command) => {
      if (!(kind in PATHS)) throw new CliError(EXIT.usage, `unknown kind "${kind}": one of ${Object.keys(PATHS).join(', ')}`);
      if (o.batch < 1) throw new CliError(EXIT.usage, '--batch must be at least 1');
      const ctx = contextOf(cmd);
      const fd = o.file ? openFile(o.file) : 0;
      const stat = fs.fstatSync(fd);
      const total = stat.isFile() ? stat.size : 0;
      const input = fs.createReadStream('', { fd, autoClose: true });
      const summary: IngestSummary = { kind: kind as Kind, lines: 0, accepted: 0, duplicates: 0, rejected: [] };
      const progress = new Progress();
      let batch: Array<{ line: number; event: unknown }> = [];
      const flush = async () => {
        if (!batch.length) return;
        await send(ctx, kind as Kind, batch, summary);
        batch = [];
        const done = `${summary.lines} lines: ${summary.accepted} accepted, ${summary.duplicates} duplicates, ${summary.rejected.length} rejected`;
        progress.update(total ? input.bytesRead / total : 0, done);
      };
      try {
        for await (const text of readline.createInterface({ input, crlfDelay: Infinity })) {
          const line = ++summary.lines;
          if (!text.trim()) continue;
          let event: unknown;
          try {
            event = JSON.parse(text);
          } catch (err) {
            summary.rejected.push({ line, detail: `not JSON: ${(err as Error).message}` });
            continue;
          }
          if (typeof event !== 'object' || event === null || Array.isArray(event)) {
            summary.rejected.push({ line, detail: 'not a JSON object' });
            continue;
          }
          batch.push({ line, event });
          if (batch.length >= o.batch) await flush();
        }
        await flush();
      } finally {
        progress.done();
      }
      summary.rejected.sort((a, b) => a.line - b.line);
      if (ctx.format === 'json') json(summary);
      else {
        out(`${summary.lines} lines: ${summary.accepted} accepted, ${summary.duplicates} duplicates, ${summary.rejected.length} rejected\n`);
        if (summary.rejected.length) out(table(summary.rejected, [{ header: 'LINE', value: (r) => r.line }, { header: 'REJECTED', value: (r) => r.detail }]));
      }
      if (summary.rejected.length) throw new CliError(EXIT.failed, `${summary.rejected.length} line(s) rejected`);
    });
}

function openFile(file: string): number {
  try {
    return fs.openSync(file, 'r');
  } catch (err) {
    throw new CliError(EXIT.usage, `cannot read ${file}: ${(err as Error).message}`);
  }
}
