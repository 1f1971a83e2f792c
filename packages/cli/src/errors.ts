/** Exit codes by outcome (docs/cli.md lists them). */
export const EXIT = {
  ok: 0,
  /** The command ran and its outcome is a failure: a task or workflow failed, events were rejected, a wait timed out. */
  failed: 1,
  /** Bad flags or arguments, or input the service refused as invalid (400, 413, 422). */
  usage: 2,
  /** No or bad credentials (401), or a role or plan that does not allow it (403). */
  auth: 3,
  notFound: 4,
  /** The current state forbids it (409). */
  conflict: 5,
  /** The service failed or could not be reached (5xx, network, 429 after the retry hint). */
  server: 6,
} as const;

export class CliError extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
  }
}

export function exitCodeForStatus(status: number): number {
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 404) return EXIT.notFound;
  if (status === 409) return EXIT.conflict;
  if (status >= 400 && status < 500 && status !== 429) return EXIT.usage;
  return EXIT.server;
}

/** One line from an API error body `{detail, code}` (422: the first issues with their place). */
export function describeError(status: number, body: unknown): string {
  const b = (body ?? {}) as { detail?: unknown; code?: unknown };
  const code = typeof b.code === 'string' ? b.code : `HTTP_${status}`;
  let detail: string;
  if (Array.isArray(b.detail)) {
    detail = (b.detail as Array<{ loc?: unknown[]; msg?: string }>)
      .slice(0, 5)
      .map((i) => `${(i.loc ?? []).join('.')}: ${i.msg ?? ''}`)
      .join('; ');
  } else if (typeof b.detail === 'string') detail = b.detail;
  else detail = JSON.stringify(b.detail ?? body ?? '');
  const hint = status === 401 ? ' (run pcctl login, or set PC_TOKEN)' : '';
  return `${status} ${code}: ${detail}${hint}`;
}
