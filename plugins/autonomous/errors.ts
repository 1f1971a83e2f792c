import { Conflict, StateConflict } from '../../core/errors';

/** 422-like refusal made 409: the opportunity's actions cannot be automated by an agent. */
export function notAutomatable(detail: string) {
  return new Conflict(detail, 'NOT_AUTOMATABLE');
}

/** 409 with the state and what may be done in it. */
export function wrongState(what: string, state: string, allowed: string[], detail?: string) {
  return new StateConflict(state, allowed, detail ?? `The ${what} is ${state}; allowed: ${allowed.length ? allowed.join(', ') : 'nothing'}`);
}
