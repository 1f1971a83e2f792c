import { z } from 'zod';

// The shared shape of a long operation (GROUPS §3): answered 202, then polled by id. Plugins
// run their own jobs; these are the states and the view fields they all have (the table
// columns are `jobColumns` in core/migration-helpers.ts).

/** queued → running → succeeded | failed | cancelled. */
export const JOB_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];
/** The states a job does not leave. */
export const JOB_FINISHED: JobState[] = ['succeeded', 'failed', 'cancelled'];

/** The fields a job's view ends with: its error, who asked for it, and its times. */
export const jobViewFields = {
  error: z.string().nullable(),
  created_by: z.string(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
};
