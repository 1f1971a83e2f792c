// What each signal's export does once its body is decoded: map, store (one transaction per
// batch, before the answer) and tell what was refused, as OTLP's partial success.
import type { Db } from '../../core/db';
import { HttpError, Unavailable } from '../../core/errors';
import type { PartialSuccess } from './decode';
import { mapLogs } from './logs';
import { mapMetrics } from './metrics';
import type { LogsRequest, MetricsRequest, TraceRequest } from './proto';
import { storeEvents, type EventSink } from './sink';
import { mapSpans, type SpanEventType } from './spans';
import { storeLogs, storeMetrics } from './store';

export interface ReceiveContext {
  db: Db;
  sink: EventSink;
  tenantId: string;
  maxBatch: number;
  retryAfter: number;
  onStoreError: (err: unknown) => void;
}

/** At most this many reasons are quoted in a partial success's error message. */
const REASONS = 5;

function partial(rejected: number, reasons: string[]): PartialSuccess | null {
  if (!rejected) return null;
  const distinct = [...new Set(reasons)];
  const more = distinct.length > REASONS ? ` (and ${distinct.length - REASONS} more reasons)` : '';
  return { rejected, errorMessage: `${rejected} refused: ${distinct.slice(0, REASONS).join('; ')}${more}` };
}

/** A store that fails is a 503 with Retry-After (exporters retry it), never a 500. */
async function storing<T>(ctx: ReceiveContext, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof HttpError) throw err;
    ctx.onStoreError(err);
    throw new Unavailable('The telemetry store could not commit this export; nothing of it was acknowledged, retry it', ctx.retryAfter, 'STORE_UNAVAILABLE');
  }
}

export async function receiveTraces(ctx: ReceiveContext, req: TraceRequest): Promise<PartialSuccess | null> {
  const mapped = mapSpans(req);
  const reasons = mapped.rejected.map((r) => r.reason);
  const kinds = (Object.keys(mapped.events) as SpanEventType[]).filter((k) => mapped.events[k].length);
  // The kinds are stored side by side: on SQLite they share one group commit.
  const results = await storing(ctx, () =>
    Promise.all(kinds.map((k) => storeEvents(ctx.sink, k, ctx.tenantId, mapped.events[k].map((e) => e.event), ctx.maxBatch))),
  );
  let rejected = mapped.rejected.length;
  for (const r of results) {
    rejected += r.rejected.length;
    reasons.push(...r.rejected.map((x) => x.reason));
  }
  return partial(rejected, reasons);
}

export async function receiveMetrics(ctx: ReceiveContext, req: MetricsRequest): Promise<PartialSuccess | null> {
  const mapped = mapMetrics(req);
  if (mapped.total) await storing(ctx, () => storeMetrics(ctx.db, ctx.tenantId, mapped.points, mapped.series.values()));
  return partial(mapped.rejected, mapped.reasons);
}

export async function receiveLogs(ctx: ReceiveContext, req: LogsRequest): Promise<PartialSuccess | null> {
  const mapped = mapLogs(req);
  if (mapped.rows.length) await storing(ctx, () => storeLogs(ctx.db, ctx.tenantId, mapped.rows));
  return partial(mapped.rejected, mapped.reasons);
}
