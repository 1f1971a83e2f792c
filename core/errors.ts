// Typed errors a handler throws; the HTTP pipeline turns them into `{detail, code}` responses.
// `code` is stable (UPPER_SNAKE): clients and tests branch on it, never on the wording.
export class HttpError extends Error {
  readonly status: number;
  readonly detail: unknown;
  readonly headers: Record<string, string>;
  readonly code: string;
  /** More fields of the error body beside detail and code (e.g. a state and its actions). */
  readonly extra: Record<string, unknown>;

  constructor(status: number, detail: unknown, headers: Record<string, string> = {}, code = codeOf(status), extra: Record<string, unknown> = {}) {
    // These are answers, not faults: nobody reads their stack, and capturing one would be
    // paid by every refused request (the 429 path).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(typeof detail === 'string' ? detail : JSON.stringify(detail));
    Error.stackTraceLimit = limit;
    this.status = status;
    this.detail = detail;
    this.headers = headers;
    this.code = code;
    this.extra = extra;
  }

  /** The response body. */
  body(): Record<string, unknown> {
    return { detail: this.detail, code: this.code, ...this.extra };
  }
}

const CODES: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'VALIDATION_ERROR',
  429: 'RATE_LIMITED',
  500: 'INTERNAL',
  502: 'UPSTREAM_FAILED',
  503: 'UNAVAILABLE',
  504: 'TIMEOUT',
};

/** The default code of a status. */
export function codeOf(status: number): string {
  return CODES[status] ?? (status >= 500 ? 'INTERNAL' : 'ERROR');
}

export class BadRequest extends HttpError {
  constructor(detail: unknown = 'Bad request', code?: string) { super(400, detail, {}, code); }
}
export class Unauthorized extends HttpError {
  constructor(detail: unknown = 'Not authenticated', code?: string) {
    super(401, detail, { 'WWW-Authenticate': 'Bearer' }, code);
  }
}
export class Forbidden extends HttpError {
  constructor(detail: unknown = 'Forbidden', code?: string) { super(403, detail, {}, code); }
}
export class NotFound extends HttpError {
  constructor(detail: unknown = 'Not found', code?: string) { super(404, detail, {}, code); }
}
export class Conflict extends HttpError {
  constructor(detail: unknown = 'Conflict', code?: string, extra?: Record<string, unknown>) { super(409, detail, {}, code, extra); }
}
/** 409 for an action the resource's state does not allow: the body names both. */
export class StateConflict extends HttpError {
  constructor(state: string, allowedActions: string[], detail?: string, code = 'INVALID_STATE') {
    super(409, detail ?? `Not allowed in state ${state}; allowed: ${allowedActions.join(', ') || 'none'}`, {}, code, { state, allowed_actions: allowedActions });
  }
}
export class PayloadTooLarge extends HttpError {
  constructor(detail: unknown = 'Request body too large') { super(413, detail); }
}
export class Unprocessable extends HttpError {
  /** `detail` is a FastAPI-style list: [{loc, msg, type}]. */
  constructor(detail: ValidationIssue[] | string, code?: string) { super(422, detail, {}, code); }
}
export class TooManyRequests extends HttpError {
  constructor(detail: unknown, retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super(429, detail, { ...headers, 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}
export class Unavailable extends HttpError {
  constructor(detail: unknown = 'Service unavailable', retryAfterSeconds?: number, code?: string) {
    super(503, detail, retryAfterSeconds ? { 'Retry-After': String(Math.ceil(retryAfterSeconds)) } : {}, code);
  }
}
/** 503 for a call that needs an outside system nobody configured; names the config key. */
export class NotConfigured extends HttpError {
  constructor(configKey: string, what?: string) {
    super(503, `${what ?? 'This operation needs an outside system'}: not configured (set ${configKey})`, {}, 'NOT_CONFIGURED', { config_key: configKey });
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
