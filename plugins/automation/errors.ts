import { HttpError } from '../../core/errors';

// Until core/errors.ts has them (plugin contract v2), the two answers this plugin needs.

/** 503 {detail, code: NOT_CONFIGURED, config_key}: an outside system that is not configured. */
export class NotConfigured extends HttpError {
  constructor(key: string, detail = `Not configured: set ${key}`) {
    super(503, { detail, code: 'NOT_CONFIGURED', config_key: key });
  }
}

/** 409 INVALID_STATE with the current state and the actions it allows. */
export class StateConflict extends HttpError {
  constructor(state: string, allowed: string[], detail = `Not allowed in state ${state}`) {
    super(409, { detail, code: 'INVALID_STATE', state, allowed_actions: allowed });
  }
}

/** An error body with a stable code. */
export function coded(status: number, code: string, detail: string, extra: Record<string, unknown> = {}): HttpError {
  return new HttpError(status, { detail, code, ...extra });
}
