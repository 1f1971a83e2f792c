// The routes' schemas: the OTLP/JSON request bodies as the OpenAPI document shows them
// (the handler decodes them with the generated protobuf code, which is stricter), the
// partial-success answers, and the query answers.
import { z } from 'zod';
import { pageQuery } from '../../core/pagination';
import type { Signal } from './proto';

const loose = z.record(z.string(), z.unknown());
const list = (item: string) => z.array(loose).optional().describe(`${item}, as OTLP/JSON writes them (ids in hex, 64-bit integers as strings)`);

export const exportBodies: Record<Signal, z.ZodType> = {
  traces: z.object({ resourceSpans: list('ResourceSpans') }),
  metrics: z.object({ resourceMetrics: list('ResourceMetrics') }),
  logs: z.object({ resourceLogs: list('ResourceLogs') }),
};

const partial = (field: string) =>
  z.object({
    partialSuccess: z
      .object({ [field]: z.string().describe('how many were refused (int64, as a string)'), errorMessage: z.string() })
      .optional()
      .describe('present when some items were refused; absent when all were accepted'),
  });

export const exportResponses: Record<Signal, z.ZodType> = {
  traces: partial('rejectedSpans'),
  metrics: partial('rejectedDataPoints'),
  logs: partial('rejectedLogRecords'),
};

const iso = z.iso.datetime({ offset: true });
const attrs = z.record(z.string(), z.unknown());

export const pointsQuery = z.object({
  name: z.string().min(1).max(255).optional().describe('a series, e.g. gen_ai.client.token.usage'),
  since: iso.optional(),
  until: iso.optional(),
  ...pageQuery,
});

export const pointsPage = z.object({
  points: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      timestamp: z.string(),
      start_timestamp: z.string().nullable(),
      kind: z.string(),
      unit: z.string().nullable(),
      service: z.string().nullable(),
      value: z.number().nullable().describe('gauge or sum: the value; histogram: the sum'),
      count: z.number().nullable(),
      min: z.number().nullable(),
      max: z.number().nullable(),
      attributes: attrs,
      resource: attrs,
      temporality: z.string(),
      explicit_bounds: z.array(z.number()).nullable(),
      bucket_counts: z.array(z.number()).nullable(),
    }),
  ),
  next_cursor: z.string().nullable(),
});

export const seriesList = z.object({
  series: z.array(
    z.object({
      name: z.string(),
      kind: z.string(),
      unit: z.string().nullable(),
      stored: z.boolean().describe('whether its points are stored (gen_ai.* series) or only counted'),
      points: z.number().int(),
      first_seen_at: z.string(),
      last_seen_at: z.string(),
    }),
  ),
});

export const logsQuery = z.object({
  trace_id: z.string().regex(/^[0-9a-fA-F]{32}$/, '32 hex characters').optional().describe('only the records of this trace, oldest first'),
  since: iso.optional(),
  until: iso.optional(),
  ...pageQuery,
});

export const logsPage = z.object({
  records: z.array(
    z.object({
      id: z.string(),
      timestamp: z.string(),
      trace_id: z.string().nullable(),
      span_id: z.string().nullable(),
      severity_number: z.number().nullable(),
      severity_text: z.string().nullable(),
      event_name: z.string().nullable(),
      service: z.string().nullable(),
      body: z.string().nullable().describe('a string body as it is; any other body as JSON'),
      attributes: attrs,
      resource: attrs,
      scope: z.string().nullable(),
    }),
  ),
  next_cursor: z.string().nullable(),
});

export const receiverState = z.object({
  in_flight: z.number().int(),
  max_concurrent: z.number().int(),
  throttled: z.number().int().describe('export requests answered 429 by this host since it started'),
  retry_after_seconds: z.number().int(),
  root_paths: z.boolean(),
});
