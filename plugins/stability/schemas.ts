import { z } from 'zod';
import { jobViewFields } from '../../core/jobs';
import { RUN_KINDS, RUN_STATES } from './store';

export const json = z.record(z.string(), z.unknown());
export const run = z.object({
  id: z.string(),
  kind: z.enum(RUN_KINDS),
  tenant_id: z.string().nullable(),
  state: z.enum(RUN_STATES),
  definition: json,
  result: json.nullable(),
  ...jobViewFields,
});
export const limitQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(20) });
export const emptyBody = z.object({}).strict().optional();
export const check = z.object({ id: z.string(), title: z.string(), status: z.enum(['pass', 'fail', 'warn']), evidence: json, remedy: z.string().nullable() });
export const analysis = { method: z.string(), window: z.object({ since: z.string(), until: z.string() }), inputs: z.array(z.string()) };
