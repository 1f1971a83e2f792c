// The one place the receiver calls the telemetry event store: spans become events of the
// store's kinds through its ingest (the same validation, dedupe and commit-before-answer as
// POST /observability/v1/ingest/{type}).
import { HttpError, type ValidationIssue } from '../../core/errors';
import type { Event } from './spans';

export interface SinkResult {
  accepted: number;
  duplicates: number;
  /** Events the store refused: their position in the list given, and why. */
  rejected: Array<{ index: number; reason: string }>;
}

/** The telemetry service as the receiver uses it. */
export interface EventSink {
  ingest(type: string, tenantId: string, body: unknown): Promise<{ accepted: number; duplicates: number; rejected: Array<{ index: number; detail: ValidationIssue[] }> }>;
}

const reasonOf = (issues: ValidationIssue[]) => issues.map((d) => `${d.loc.slice(-1).join('.')}: ${d.msg}`).join('; ');

/**
 * Stores events of one kind in batches of at most `maxBatch` (the store's bound), each
 * batch in one transaction. A batch with nothing valid is reported event by event.
 */
export async function storeEvents(sink: EventSink, type: string, tenantId: string, events: Event[], maxBatch: number): Promise<SinkResult> {
  const out: SinkResult = { accepted: 0, duplicates: 0, rejected: [] };
  const batches: Array<Promise<void>> = [];
  for (let at = 0; at < events.length; at += maxBatch) {
    const slice = events.slice(at, at + maxBatch);
    batches.push(
      sink.ingest(type, tenantId, { events: slice }).then(
        (r) => {
          out.accepted += r.accepted;
          out.duplicates += r.duplicates;
          for (const x of r.rejected) out.rejected.push({ index: at + x.index, reason: reasonOf(x.detail) });
        },
        (err: unknown) => {
          // Nothing of the batch was valid (the store answers 422): every event is refused.
          if (!(err instanceof HttpError) || err.status !== 422) throw err;
          const detail = Array.isArray(err.detail) ? (err.detail as ValidationIssue[]) : [];
          slice.forEach((_e, i) => {
            const own = detail.filter((d) => d.loc[2] === i);
            out.rejected.push({ index: at + i, reason: reasonOf(own) || 'refused by the store' });
          });
        },
      ),
    );
  }
  await Promise.all(batches);
  return out;
}
