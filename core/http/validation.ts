import type { z } from 'zod';
import type { ValidationIssue } from '../errors';

export type Location = 'path' | 'query' | 'body' | 'response';

/** zod issues in FastAPI's shape: [{loc, msg, type}]. */
export function toIssues(where: Location, error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => {
    const missing = issue.code === 'invalid_type' && (issue as { input?: unknown }).input === undefined;
    return {
      loc: [where, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
      msg: missing ? 'Field required' : issue.message,
      type: missing ? 'missing' : issue.code,
    };
  });
}

/** Parses one part of a request; collects issues instead of throwing. */
export function parsePart(
  schema: z.ZodType | undefined,
  value: unknown,
  where: Location,
  issues: ValidationIssue[],
): unknown {
  if (!schema) return value;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  issues.push(...toIssues(where, result.error));
  return undefined;
}
