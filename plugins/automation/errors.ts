import { HttpError } from '../../core/errors';

export { NotConfigured, StateConflict } from '../../core/errors';

/** An error body with a stable code of this plugin's own (e.g. RUNNING_WORK, ISSUER_FAILED). */
export function coded(status: number, code: string, detail: string, extra: Record<string, unknown> = {}): HttpError {
  return new HttpError(status, detail, {}, code, extra);
}
