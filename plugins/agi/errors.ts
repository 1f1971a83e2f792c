import { Conflict, StateConflict } from '../../core/errors';

/** 409 for an approval that is no longer pending. */
export function alreadyDecided(state: string) {
  return new StateConflict(state, [], `The request is ${state}; only a pending request can be approved or rejected`);
}

/** 409 for starting a running loop (id given) or stopping when none runs (null). */
export function loopRunning(id: string | null) {
  return id ? new StateConflict('running', ['stop'], `The planning loop ${id} is already running`) : new StateConflict('stopped', ['start'], 'No planning loop is running');
}

/** 409: the platform has not measured enough to fit a model. */
export function insufficient(detail: string) {
  return new Conflict(detail, 'INSUFFICIENT_DATA');
}
