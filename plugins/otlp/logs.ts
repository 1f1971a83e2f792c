// OTLP log records, stored with their trace and span ids so that the records of a trace
// can be read beside it.
import crypto from 'node:crypto';
import { attrsOf, plain } from './attrs';
import { num, type LogsRequest } from './proto';

export interface LogRow {
  id: string;
  ts: string;
  trace_id: string | null;
  span_id: string | null;
  severity_number: number | null;
  severity_text: string | null;
  event_name: string | null;
  service: string | null;
  body: string | null;
  data: string;
}

export interface MappedLogs {
  rows: LogRow[];
  total: number;
  rejected: number;
  reasons: string[];
}

const MAX_BODY = 65_536;
const hex = (b: Uint8Array | null | undefined) => (b && b.length ? Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex') : null);
const cut = (s: string, max: number) => (s.length > max ? s.slice(0, max) : s);

export function mapLogs(req: LogsRequest): MappedLogs {
  const out: MappedLogs = { rows: [], total: 0, rejected: 0, reasons: [] };
  for (const rl of req.resourceLogs ?? []) {
    const resource = attrsOf(rl.resource?.attributes);
    const service = typeof resource['service.name'] === 'string' ? cut(resource['service.name'], 128) : null;
    for (const sl of rl.scopeLogs ?? []) {
      for (const r of sl.logRecords ?? []) {
        out.total++;
        // The spec: time_unix_nano when the event happened, else when it was observed.
        const ns = num(r.timeUnixNano) || num(r.observedTimeUnixNano);
        const traceId = hex(r.traceId);
        const spanId = hex(r.spanId);
        const bad = !ns ? 'a log record without time_unix_nano or observed_time_unix_nano'
          : traceId && traceId.length !== 32 ? 'a log record whose trace_id is not 16 bytes'
            : spanId && spanId.length !== 8 * 2 ? 'a log record whose span_id is not 8 bytes' : null;
        if (bad) {
          out.rejected++;
          out.reasons.push(bad);
          continue;
        }
        const body = r.body ? plain(r.body) : null;
        const bodyText = body === null ? null : cut(typeof body === 'string' ? body : JSON.stringify(body), MAX_BODY);
        const attributes = attrsOf(r.attributes);
        const ts = new Date(Math.floor(ns / 1e6)).toISOString();
        const severity = r.severityNumber ? Number(r.severityNumber) : null;
        const content = JSON.stringify([ns, traceId, spanId, severity, r.severityText ?? '', r.eventName ?? '', bodyText, attributes, resource]);
        out.rows.push({
          id: crypto.createHash('sha256').update(content).digest('hex').slice(0, 32),
          ts,
          trace_id: traceId,
          span_id: spanId,
          severity_number: severity,
          severity_text: r.severityText ? cut(r.severityText, 64) : null,
          event_name: r.eventName ? cut(r.eventName, 255) : null,
          service,
          body: bodyText,
          data: JSON.stringify({ attributes, resource, scope: sl.scope?.name ?? null }),
        });
      }
    }
  }
  return out;
}
