// OTLP/HTTP bodies: binary protobuf or JSON, gzip-compressed or not, and answers in the
// encoding of the request (the OTLP/HTTP specification's rules).
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Request, Response } from 'express';
import { BadRequest, HttpError, PayloadTooLarge } from '../../core/errors';
import { Writer } from 'protobufjs/minimal';
import { collectors, type Signal } from './proto';

export type Encoding = 'protobuf' | 'json';

const gunzip = promisify(zlib.gunzip);

class UnsupportedMedia extends HttpError {
  constructor(detail: string, code: string) {
    super(415, detail, {}, code);
  }
}

/** Whether the request says it is protobuf (then its errors are answered in protobuf too). */
export function isProtobuf(req: Request): boolean {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  return type === 'application/x-protobuf' || type === 'application/protobuf';
}

/** The encoding a request's Content-Type names; 415 for anything OTLP/HTTP does not define. */
export function encodingOf(req: Request): Encoding {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  throw new UnsupportedMedia(`Content-Type must be application/x-protobuf or application/json, not "${type || '(none)'}"`, 'UNSUPPORTED_MEDIA_TYPE');
}

/**
 * The raw bytes of a protobuf body, inflated when gzip-compressed; at most `limit` bytes
 * either way (413 above). JSON bodies are read by the host's parser (which inflates gzip too).
 */
export async function readProtobufBody(req: Request, limit: number): Promise<Buffer> {
  const enc = String(req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (enc !== 'identity' && enc !== 'gzip') throw new UnsupportedMedia(`Content-Encoding must be gzip or identity, not "${enc}"`, 'UNSUPPORTED_ENCODING');
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new PayloadTooLarge(`The body holds ${declared} bytes; the limit is ${limit}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new PayloadTooLarge(`The body exceeds the limit of ${limit} bytes`);
    chunks.push(chunk);
  }
  const raw = Buffer.concat(chunks, size);
  if (enc === 'identity') return raw;
  try {
    return await gunzip(raw, { maxOutputLength: limit });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new PayloadTooLarge(`The inflated body exceeds the limit of ${limit} bytes`);
    throw new BadRequest(`The gzip body does not inflate: ${(err as Error).message}`, 'MALFORMED_BODY');
  }
}

/** Decodes a binary ExportXServiceRequest; 400 when the bytes are not one. */
export function decodeProtobuf<S extends Signal>(signal: S, bytes: Uint8Array) {
  try {
    return collectors[signal].request.decode(bytes) as ReturnType<(typeof collectors)[S]['request']['decode']>;
  } catch (err) {
    throw new BadRequest(`The body is not an OTLP ${signal} protobuf message: ${(err as Error).message}`, 'MALFORMED_BODY');
  }
}

const ID_KEYS = new Set(['traceId', 'spanId', 'parentSpanId']);
const HEX = /^(?:[0-9a-fA-F]{2})*$/;

/**
 * OTLP/JSON writes trace and span ids as hex where protobuf's JSON mapping would use
 * base64: they become bytes before the generated fromObject reads the rest.
 */
function hexIds(node: unknown, depth = 0): void {
  if (depth > 64 || typeof node !== 'object' || node === null) return;
  if (Array.isArray(node)) {
    for (const x of node) hexIds(x, depth + 1);
    return;
  }
  const obj = node as Record<string, unknown>;
  for (const k in obj) {
    const v = obj[k];
    if (ID_KEYS.has(k) && typeof v === 'string') {
      if (!HEX.test(v)) throw new BadRequest(`${k} "${v.slice(0, 40)}" is not hex`, 'MALFORMED_BODY');
      obj[k] = Buffer.from(v, 'hex');
    } else if (typeof v === 'object') hexIds(v, depth + 1);
  }
}

/** Decodes an OTLP/JSON request already parsed by the host; 400 when it is not one. */
export function decodeJson<S extends Signal>(signal: S, body: unknown) {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new BadRequest(`The body is not an OTLP ${signal} JSON object`, 'MALFORMED_BODY');
  try {
    hexIds(body);
    return collectors[signal].request.fromObject(body as Record<string, unknown>) as ReturnType<(typeof collectors)[S]['request']['decode']>;
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw new BadRequest(`The body is not an OTLP ${signal} JSON message: ${(err as Error).message}`, 'MALFORMED_BODY');
  }
}

/** The field of ExportXPartialSuccess that counts what was refused. */
const REJECTED_FIELD: Record<Signal, string> = { traces: 'rejectedSpans', metrics: 'rejectedDataPoints', logs: 'rejectedLogRecords' };

export interface PartialSuccess {
  rejected: number;
  errorMessage: string;
}

/** The success answer's JSON form (what the route declares). */
export function responseJson(signal: Signal, partial: PartialSuccess | null): Record<string, unknown> {
  if (!partial || (partial.rejected === 0 && !partial.errorMessage)) return {};
  // int64 fields are strings in OTLP/JSON.
  return { partialSuccess: { [REJECTED_FIELD[signal]]: String(partial.rejected), errorMessage: partial.errorMessage } };
}

/** Writes a binary ExportXServiceResponse (empty when everything was accepted). */
export function sendProtobuf(res: Response, signal: Signal, partial: PartialSuccess | null): void {
  const message = partial && (partial.rejected || partial.errorMessage) ? { partialSuccess: { [REJECTED_FIELD[signal]]: partial.rejected, errorMessage: partial.errorMessage } } : {};
  const type = collectors[signal].response;
  const bytes = Buffer.from(type.encode(type.fromObject(message)).finish());
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/x-protobuf');
  res.setHeader('Content-Length', bytes.length);
  res.end(bytes);
}

// google.rpc.Status codes for the HTTP statuses the receiver answers (OTLP/HTTP: a failed
// protobuf request gets a protobuf-encoded Status as its body).
const GRPC_CODE: Record<number, number> = { 400: 3, 401: 16, 403: 7, 404: 5, 405: 12, 413: 3, 415: 3, 422: 3, 429: 8, 503: 14 };

/** google.rpc.Status {code = 1, message = 2}, with protobufjs's writer (the generated code's runtime). */
export function statusBytes(httpStatus: number, message: string): Uint8Array {
  return Writer.create().uint32(8).int32(GRPC_CODE[httpStatus] ?? 13).uint32(18).string(message).finish();
}

/**
 * The answer to a failed protobuf export: the HTTP status and headers (Retry-After) of the
 * error, and a Status whose message starts with the stable code (`MALFORMED_BODY: ...`).
 */
export function sendProtobufError(res: Response, err: HttpError): void {
  const detail = typeof err.detail === 'string' ? err.detail : JSON.stringify(err.detail);
  const bytes = Buffer.from(statusBytes(err.status, `${err.code}: ${detail}`));
  res.statusCode = err.status;
  for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  res.setHeader('Content-Type', 'application/x-protobuf');
  res.setHeader('Content-Length', bytes.length);
  res.end(bytes);
}
