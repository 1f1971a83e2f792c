/**
 * What the mesh needs of a cancellation signal: an AbortSignal fits, and so does Cancel.
 * Piscina accepts it too (it calls addEventListener with `once` and removeEventListener).
 */
export interface CancelSignal {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * A one-shot cancel switch for one task. An AbortController costs several microseconds to
 * make (its AbortSignal is an EventTarget with weak-reference bookkeeping), and a small task
 * made two of them: the caller's and the node's own. Listeners run once, on the first abort.
 */
export class Cancel implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | null = null;

  addEventListener(_type: 'abort', listener: () => void): void {
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const list = this.listeners;
    if (!list) return;
    const i = list.indexOf(listener);
    if (i !== -1) list.splice(i, 1);
  }

  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason ?? new Error('This operation was aborted');
    const list = this.listeners;
    this.listeners = null;
    if (list) for (const fn of list) fn();
  }
}
