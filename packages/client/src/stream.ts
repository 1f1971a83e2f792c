import type { components as streamComponents } from './stream-schema';

type Schemas = streamComponents['schemas'];
/** The messages a client sends (the rest are those the hub sends). */
type ClientMessageName = 'subscribe' | 'ping' | 'snapshot_request';

/** Every message the hub sends, by type: `{type, timestamp, data}` (generated from the AsyncAPI document). */
export type StreamMessages = { [K in Exclude<keyof Schemas, ClientMessageName>]: Schemas[K] };
export type StreamType = Extract<keyof StreamMessages, string>;
export type StreamMessage<T extends StreamType = StreamType> = StreamMessages[T];

/** What the stream client needs of a WebSocket: the browser's and `ws`'s both have it. */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

/** A WebSocket constructor: the browser's global, or `ws` in Node (which also takes headers). */
export type SocketConstructor = new (url: string, protocols?: string | string[], options?: { headers?: Record<string, string> }) => SocketLike;

export interface StreamOptions {
  /** The service's base URL (http or https; ws/wss is derived). */
  baseUrl: string;
  /** The API JWT; without it only mesh events arrive (the hub's visibility rule). */
  token?: string | null;
  /** Event types to receive; all when absent. */
  types?: string[];
  /**
   * The WebSocket implementation: `ws` in Node (Node 20 has no global one), the global one by
   * default. With `ws` the token goes in an Authorization header; a browser cannot set
   * headers on a WebSocket, so there it goes in the `token` query parameter, which the hub
   * also reads.
   */
  WebSocket?: SocketConstructor;
  /** Where the token goes: 'header' by default with a given WebSocket, 'query' with the global one. */
  tokenIn?: 'header' | 'query';
}

type Listener = (msg: StreamMessage) => void;

export class StreamClosedError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
  ) {
    super(`stream closed (${code}${reason ? `: ${reason}` : ''})`);
  }
}

/** The WebSocket address of /ops/stream under a base URL. */
export function streamUrl(baseUrl: string, token?: string | null): string {
  const u = new URL(baseUrl.replace(/\/+$/, '') + '/ops/stream');
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  if (token) u.searchParams.set('token', token);
  return u.toString();
}

/**
 * A connection to /ops/stream with typed messages. `on(type, fn)` for callbacks,
 * `next(type, match)` to await one message, or `for await (const m of stream)` for all.
 */
export class Stream implements AsyncIterable<StreamMessage> {
  /** Resolves when the socket is open (and the subscription sent); rejects if it fails first. */
  readonly opened: Promise<void>;
  /** Resolves with the close code and reason when the connection ends. */
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly socket: SocketLike;
  private readonly listeners = new Map<string, Set<Listener>>();
  private ended: { code: number; reason: string } | null = null;

  constructor(opts: StreamOptions) {
    const Ctor = opts.WebSocket ?? (globalThis as { WebSocket?: SocketConstructor }).WebSocket;
    if (!Ctor) throw new Error('no WebSocket implementation: pass one (e.g. `ws`) as options.WebSocket');
    const viaHeader = Boolean(opts.token) && (opts.tokenIn ?? (opts.WebSocket ? 'header' : 'query')) === 'header';
    const url = streamUrl(opts.baseUrl, viaHeader ? null : opts.token);
    this.socket = viaHeader ? new Ctor(url, undefined, { headers: { authorization: `Bearer ${opts.token}` } }) : new Ctor(url);
    let markClosed!: (v: { code: number; reason: string }) => void;
    this.closed = new Promise((resolve) => (markClosed = resolve));
    this.opened = new Promise((resolve, reject) => {
      this.socket.onopen = () => {
        if (opts.types?.length) this.subscribe(opts.types);
        resolve();
      };
      this.socket.onerror = () => undefined;
      this.socket.onclose = (ev) => {
        this.ended = { code: ev.code, reason: ev.reason };
        reject(new StreamClosedError(ev.code, ev.reason));
        this.emit({ type: '__closed' } as unknown as StreamMessage);
        markClosed(this.ended);
      };
    });
    // A caller that only awaits `closed` should not see an unhandled rejection.
    this.opened.catch(() => undefined);
    this.socket.onmessage = (ev) => {
      let msg: StreamMessage;
      try {
        msg = JSON.parse(typeof ev.data === 'string' ? ev.data : String(ev.data)) as StreamMessage;
      } catch {
        return;
      }
      if (msg && typeof msg.type === 'string') this.emit(msg);
    };
  }

  /** Calls `fn` for each message of a type ('*': every type); returns a function that stops it. */
  on<T extends StreamType>(type: T | '*', fn: (msg: StreamMessage<T>) => void): () => void {
    const set = this.listeners.get(type) ?? new Set();
    this.listeners.set(type, set);
    set.add(fn as Listener);
    return () => set.delete(fn as Listener);
  }

  /** The next message of a type that `match` accepts; rejects on close or after `timeoutMs`. */
  next<T extends StreamType>(type: T, match: (msg: StreamMessage<T>) => boolean = () => true, timeoutMs?: number): Promise<StreamMessage<T>> {
    return new Promise((resolve, reject) => {
      if (this.ended) return reject(new StreamClosedError(this.ended.code, this.ended.reason));
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stop = () => {
        off();
        offClose();
        if (timer) clearTimeout(timer);
      };
      const off = this.on(type, (m) => {
        if (!match(m)) return;
        stop();
        resolve(m);
      });
      const offClose = this.onClose(() => {
        stop();
        reject(new StreamClosedError(this.ended?.code ?? 1006, this.ended?.reason ?? ''));
      });
      if (timeoutMs !== undefined) timer = setTimeout(() => (stop(), reject(new Error(`no ${type} message within ${timeoutMs} ms`))), timeoutMs);
    });
  }

  /** Receive only these types from now on ([] or ['*']: all). */
  subscribe(types: string[]): void {
    this.send({ type: 'subscribe', types });
  }

  ping(): void {
    this.send({ type: 'ping' });
  }

  /** Ask for a fresh `snapshot` message. */
  requestSnapshot(): void {
    this.send({ type: 'snapshot' });
  }

  close(code = 1000, reason = ''): void {
    this.socket.close(code, reason);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StreamMessage> {
    const queue: StreamMessage[] = [];
    let wake: (() => void) | null = null;
    const off = this.on('*', (m) => {
      queue.push(m);
      wake?.();
    });
    const offClose = this.onClose(() => wake?.());
    try {
      for (;;) {
        if (queue.length) {
          yield queue.shift()!;
          continue;
        }
        if (this.ended) return;
        await new Promise<void>((r) => (wake = r));
        wake = null;
      }
    } finally {
      off();
      offClose();
    }
  }

  private send(msg: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(msg));
  }

  private onClose(fn: () => void): () => void {
    const set = this.listeners.get('__closed') ?? new Set();
    this.listeners.set('__closed', set);
    set.add(fn);
    return () => set.delete(fn);
  }

  private emit(msg: StreamMessage): void {
    for (const fn of [...(this.listeners.get(msg.type) ?? [])]) fn(msg);
    if (msg.type !== ('__closed' as string)) for (const fn of [...(this.listeners.get('*') ?? [])]) fn(msg);
  }
}

/** Opens /ops/stream: `openStream({ baseUrl, token, types: ['node_state'], WebSocket })`. */
export function openStream(opts: StreamOptions): Stream {
  return new Stream(opts);
}
