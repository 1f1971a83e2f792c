import { nowIso } from '../../../core/db';
import { PayloadTooLarge, Unprocessable, type ValidationIssue } from '../../../core/errors';
import type { EventType, IngestResult } from '../../../core/contracts/telemetry';
import { EVENT_SPECS, toRow } from './events';
import { validate } from './validate';
import type { EventRecorder, Stored } from './record';
import { Slices } from './slices';
import type { EventStore } from './store';

/** Events recorded through OpenTelemetry between two looks at the clock. */
const RECORD_SLICE = 64;


/** The event ids must not point at themselves and need a trace to belong to. */
function traceIssues(e: { trace_id?: string; span_id?: string; parent_span_id?: string | null }, loc: Array<string | number>): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  if (!e.trace_id && (e.span_id || e.parent_span_id)) out.push({ loc: [...loc, 'trace_id'], msg: 'span_id and parent_span_id need a trace_id', type: 'value_error' });
  if (e.span_id && e.parent_span_id && e.span_id.toLowerCase() === e.parent_span_id.toLowerCase()) {
    out.push({ loc: [...loc, 'parent_span_id'], msg: 'a span cannot be its own parent', type: 'value_error' });
  }
  return out;
}

/**
 * Validates one event or a batch (`{events: [...]}`), stores the valid ones in one
 * transaction (a repeated id is stored once), and only then records them through
 * OpenTelemetry and answers. A single bad event, or a batch with nothing valid, is a 422.
 */
export async function ingest(
  store: EventStore,
  recorder: EventRecorder,
  maxBatch: number,
  type: EventType,
  tenantId: string,
  body: unknown,
): Promise<IngestResult> {
  const isBatch = typeof body === 'object' && body !== null && !Array.isArray(body) && 'events' in body;
  let events: unknown[];
  if (isBatch) {
    const list = (body).events;
    if (!Array.isArray(list)) throw new Unprocessable([{ loc: ['body', 'events'], msg: 'Input should be a list of events', type: 'list_type' }]);
    if (Object.keys(body).length > 1) throw new Unprocessable([{ loc: ['body'], msg: 'A batch holds only "events"', type: 'extra_forbidden' }]);
    if (list.length === 0) throw new Unprocessable([{ loc: ['body', 'events'], msg: 'A batch holds at least one event', type: 'too_short' }]);
    if (list.length > maxBatch) throw new PayloadTooLarge(`A batch holds at most ${maxBatch} events; this one has ${list.length}`);
    events = list;
  } else {
    events = [body];
  }

  const { spec, keys } = EVENT_SPECS[type];
  const now = nowIso();
  const rejected: IngestResult['rejected'] = [];
  const ids: Array<string | null> = new Array(events.length).fill(null);
  const fresh: Stored[] = [];
  const seen = new Set<string>();
  const given: string[] = [];
  let repeatedInBatch = 0;
  const slices = new Slices();
  for (let i = 0; i < events.length; i++) {
    if ((i & 15) === 15 && slices.due()) await slices.pause();
    const loc: Array<string | number> = isBatch ? ['body', 'events', i] : ['body'];
    const parsed = validate(spec, keys, events[i], loc);
    const issues = parsed.value ? traceIssues(parsed.value, loc) : parsed.issues;
    if (issues.length) {
      rejected.push({ index: i, detail: issues });
      continue;
    }
    // toRow fills the id in, in place: whether the client gave one is read first.
    const givenId = parsed.value!.id !== undefined;
    const item = toRow(type, tenantId, parsed.value!, now);
    const row = item.row;
    ids[i] = row.id;
    if (seen.has(row.id)) {
      repeatedInBatch++;
      continue;
    }
    seen.add(row.id);
    if (givenId) given.push(row.id);
    fresh.push(item);
  }
  if (!fresh.length && !repeatedInBatch) {
    recorder.counted(type, 0, 0, rejected.length);
    throw new Unprocessable(rejected.flatMap((r) => r.detail));
  }

  const inserted = await store.insert(type, tenantId, fresh.map((f) => f.row), repeatedInBatch, rejected.length, given);
  const stored = inserted.size === fresh.length ? fresh : fresh.filter((f) => inserted.has(f.row.id));
  const duplicates = fresh.length - stored.length + repeatedInBatch;
  recorder.counted(type, stored.length, duplicates, rejected.length);
  for (let i = 0; i < stored.length; i += RECORD_SLICE) {
    if (i && slices.due()) await slices.pause();
    recorder.record(type, i === 0 && stored.length <= RECORD_SLICE ? stored : stored.slice(i, i + RECORD_SLICE));
  }
  return { accepted: stored.length, duplicates, rejected, ids };
}
