// Typed errors a handler throws; the HTTP pipeline turns them into `{detail}` responses.
export class HttpError extends Error {
  readonly status: number;
  readonly detail: unknown;
  readonly headers: Record<string, string>;

  constructor(status: number, detail: unknown, headers: Record<string, string> = {}) {
    // These are answers, not faults: nobody reads their stack, and capturing one would be
    // paid by every refused request (the 429 path).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(typeof detail === 'string' ? detail : JSON.stringify(detail));
    Error.stackTraceLimit = limit;
    this.status = status;
    this.detail = detail;
    this.headers = headers;
  }
}

export class BadRequest extends HttpError {
  constructor(detail: unknown = 'Bad request') { super(400, detail); }
}
export class Unauthorized extends HttpError {
  constructor(detail: unknown = 'Not authenticated') {
    super(401, detail, { 'WWW-Authenticate': 'Bearer' });
  }
}
export class Forbidden extends HttpError {
  constructor(detail: unknown = 'Forbidden') { super(403, detail); }
}
export class NotFound extends HttpError {
  constructor(detail: unknown = 'Not found') { super(404, detail); }
}
export class Conflict extends HttpError {
  constructor(detail: unknown = 'Conflict') { super(409, detail); }
}
export class PayloadTooLarge extends HttpError {
  constructor(detail: unknown = 'Request body too large') { super(413, detail); }
}
export class Unprocessable extends HttpError {
  /** `detail` is a FastAPI-style list: [{loc, msg, type}]. */
  constructor(detail: ValidationIssue[] | string) { super(422, detail); }
}
export class TooManyRequests extends HttpError {
  constructor(detail: unknown, retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super(429, detail, { ...headers, 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}
export class Unavailable extends HttpError {
  constructor(detail: unknown = 'Service unavailable', retryAfterSeconds?: number) {
    super(503, detail, retryAfterSeconds ? { 'Retry-After': String(Math.ceil(retryAfterSeconds)) } : {});
  }
}

export interface ValidationIssue {
  loc: Array<string | number>;
  msg: string;
  type: string;
}

/** A 422 for one field, for checks that a schema cannot express. */
export function invalid(loc: Array<string | number>, msg: string, type = 'value_error'): Unprocessable {
  return new Unprocessable([{ loc, msg, type }]);
}
