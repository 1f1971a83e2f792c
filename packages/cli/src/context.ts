import { createClient, type PlatformClient } from '@platform-control/client';
import type { Command } from 'commander';
import { resolveTarget } from './config';
import { CliError, describeError, EXIT, exitCodeForStatus } from './errors';
import type { Format } from './output';

export interface Ctx {
  client: PlatformClient;
  url: string;
  token: string | null;
  format: Format;
}

export function contextOf(cmd: Command): Ctx {
  const opts = cmd.optsWithGlobals<{ url?: string; output?: string }>();
  const format = (opts.output ?? 'table') as Format;
  if (format !== 'table' && format !== 'json') throw new CliError(EXIT.usage, `--output must be table or json, not ${opts.output}`);
  const { url, token } = resolveTarget(opts);
  return { client: createClient({ baseUrl: url, token }), url, token, format };
}

/** The success body of an openapi-fetch call; an error answer becomes a CliError with its exit code. */
export async function call<T>(request: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let res: { data?: T; error?: unknown; response: Response };
  try {
    res = await request;
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
    throw new CliError(EXIT.server, `cannot reach the service: ${cause}`);
  }
  if (res.error !== undefined || !res.response.ok) throw new CliError(exitCodeForStatus(res.response.status), describeError(res.response.status, res.error));
  return res.data as T;
}

/** A whole list, following next_cursor (`--all`), or its first page. */
export async function pages<T>(all: boolean, page: (cursor: string | undefined) => Promise<{ items: T[]; next: string | null }>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (;;) {
    const { items, next } = await page(cursor);
    out.push(...items);
    if (!all || !next) return out;
    cursor = next;
  }
}

/** Positive integer option values. */
export function intOption(name: string): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new CliError(EXIT.usage, `${name} must be a whole number, not "${v}"`);
    return n;
  };
}
