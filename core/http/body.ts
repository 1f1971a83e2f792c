import type { Request } from 'express';
import { HttpError } from '../errors';

/** Errors shaped like body-parser's, so that the error handler answers both alike. */
function bodyError(type: string, status: number, message: string): Error {
  return Object.assign(new Error(message), { type, status });
}

/**
 * Whether the plain reader below can take this body: JSON, UTF-8 (RFC 8259), not
 * compressed. Anything else goes through Express's parsers (forms, gzip, other charsets).
 */
export function plainJson(req: Request): boolean {
  const enc = req.headers['content-encoding'];
  if (enc !== undefined && enc.toLowerCase() !== 'identity') return false;
  const type = req.headers['content-type'];
  if (!type) return false;
  const semi = type.indexOf(';');
  const mime = (semi === -1 ? type : type.slice(0, semi)).trim().toLowerCase();
  if (mime !== 'application/json') return false;
  if (semi === -1) return true;
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(type.slice(semi));
  return !charset || charset[1].toLowerCase() === 'utf-8' || charset[1].toLowerCase() === 'utf8';
}

/**
 * Reads a JSON body into req.body. body-parser does the same with content negotiation,
 * iconv decoding and a stream library on every request; for plain UTF-8 JSON that costs
 * more than the rest of a small POST's pipeline. Same rules as body-parser's strict mode:
 * an empty body is {}, only an object or array at the top level, 400 when malformed, 413
 * over the limit (checked against Content-Length before reading when it is given).
 */
export function readJson(req: Request, limit: number, done: (err?: unknown) => void): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.pause();
    return done(bodyError('entity.too.large', 413, 'request entity too large'));
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (err?: unknown) => {
    if (finished) return;
    finished = true;
    req.removeListener('data', onData);
    req.removeListener('end', onEnd);
    req.removeListener('error', onError);
    req.removeListener('aborted', onAborted);
    done(err);
  };
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) {
      req.pause();
      return finish(bodyError('entity.too.large', 413, 'request entity too large'));
    }
    chunks.push(chunk);
  };
  const onEnd = () => {
    const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, size).toString('utf8');
    if (text.length === 0) {
      req.body = {};
      return finish();
    }
    const first = firstNonSpace(text);
    if (first !== '{' && first !== '[') return finish(bodyError('entity.parse.failed', 400, 'Malformed JSON'));
    // Kept (the string exists anyway) for routes that check a signature over the exact bytes.
    (req as Request & { rawBody?: string }).rawBody = text;
    try {
      req.body = JSON.parse(text);
    } catch {
      return finish(bodyError('entity.parse.failed', 400, 'Malformed JSON'));
    }
    finish();
  };
  const onError = (err: Error) => finish(new HttpError(400, `Could not read the request body: ${err.message}`));
  const onAborted = () => finish(new HttpError(400, 'The client closed the connection before sending the whole body'));
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
  req.on('aborted', onAborted);
}

function firstNonSpace(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== ' ' && c !== '\t' && c !== '\n' && c !== '\r') return c;
  }
  return '';
}
