import { Conflict } from '../../core/errors';

/** 409: the platform has not measured enough to fit the model. */
export function insufficient(detail: string) {
  return new Conflict(detail, 'INSUFFICIENT_DATA');
}
