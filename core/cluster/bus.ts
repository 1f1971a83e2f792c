// Control of a node from any host (docs/scale-out.md): the host that gets the call sends it
// to the host that runs the node over Redis pub/sub and waits for that host's answer. The
// owner acts (and records the action and its events) once; the caller gets its exact answer.
import crypto from 'node:crypto';
import { HttpError } from '../errors';
import type { Logger } from '../logger';
import type { Redis } from '../redis';

export interface ControlRequest {
  id: string;
  from: string;
  node_id: string;
  action: string;
  args: Record<string, unknown>;
}

/** The owner's answer: the status and body its own route would have given. */
export interface ControlAnswer {
  status: number;
  body: unknown;
}

/** Runs one kind of request on the host that owns its subject (plugins register theirs). */
export type ControlHandler = (req: ControlRequest) => Promise<ControlAnswer>;

/**
 * Another host's body when it succeeded; its refusal (status, detail, code and the rest, with
 * `headers`) as an HttpError otherwise.
 */
export function bodyOrThrow<T>(a: ControlAnswer, owner: string, headers: Record<string, string> = {}): T {
  if (a.status < 300) return a.body as T;
  const { detail, code, ...extra } = (a.body ?? {}) as { detail?: unknown; code?: string } & Record<string, unknown>;
  throw new HttpError(a.status, detail ?? `host ${owner} answered ${a.status}`, headers, code, extra);
}

/** Runs `fn` as an owner's answer: its result with `status`, a refusal (HttpError) as its status and body. */
export async function answerOf(fn: () => unknown, status = 200): Promise<ControlAnswer> {
  try {
    return { status, body: await fn() };
  } catch (err) {
    if (err instanceof HttpError) return { status: err.status, body: err.body() };
    throw err;
  }
}

export class ControlBus {
  private sub: Redis | null = null;
  private readonly pending = new Map<string, (a: ControlAnswer) => void>();
  private readonly handlers = new Map<string, ControlHandler>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly hostId: string,
    private readonly timeoutMs: number,
    /** Runs a request on this host, for a node it owns. */
    private readonly run: (req: ControlRequest) => Promise<ControlAnswer>,
    private readonly log: Logger,
  ) {}

  private channel(kind: 'req' | 'ans', host: string): string {
    return `${this.prefix}:ctl:${kind}:${host}`;
  }

  async start(): Promise<void> {
    // A subscribed connection can do nothing else: the bus has its own.
    const sub = this.redis.duplicate();
    this.sub = sub;
    sub.on('error', () => undefined);
    sub.on('message', (channel: string, text: string) => {
      let msg: (ControlRequest & ControlAnswer) | null;
      try {
        msg = JSON.parse(text);
      } catch {
        return;
      }
      if (!msg || typeof msg.id !== 'string') return;
      if (channel === this.channel('ans', this.hostId)) {
        this.pending.get(msg.id)?.({ status: msg.status, body: msg.body });
        return;
      }
      void this.answer(msg);
    });
    await sub.subscribe(this.channel('req', this.hostId), this.channel('ans', this.hostId));
  }

  /**
   * Lets other hosts send `action` here (a plugin's own cross-host operation, such as a chaos
   * fault on a node this host runs); node actions go to the bus's default runner.
   */
  handle(action: string, fn: ControlHandler): void {
    if (this.handlers.has(action)) throw new Error(`cluster control: action ${action} is handled already`);
    this.handlers.set(action, fn);
  }

  private async answer(req: ControlRequest): Promise<void> {
    let a: ControlAnswer;
    try {
      const h = this.handlers.get(req.action);
      a = h ? await h(req) : await this.run(req);
    } catch (err) {
      this.log.error({ err: (err as Error).message, action: req.action, node: req.node_id }, 'cluster control: the action failed on its owner');
      a = { status: 502, body: { detail: `host ${this.hostId} failed to run ${req.action} on node ${req.node_id} (request id ${req.id}; its log has the details)`, code: 'OWNER_FAILED' } };
    }
    await this.redis.publish(this.channel('ans', req.from), JSON.stringify({ id: req.id, ...a })).catch((err: Error) => this.log.warn({ err: err.message }, 'cluster control: the answer could not be sent'));
  }

  /**
   * Sends `action` on `nodeId` (or another subject the owner holds, named by `opts.what`) to
   * `owner`; its answer, or 504 OWNER_TIMEOUT when none comes in time.
   */
  async request(owner: string, nodeId: string, action: string, args: Record<string, unknown>, opts: { what?: string; timeoutMs?: number } = {}): Promise<ControlAnswer> {
    const id = crypto.randomUUID();
    const what = opts.what ?? `node ${nodeId}`;
    // An action that takes time by design (a probe round) adds its own time to the bus's.
    const wait = this.timeoutMs + (opts.timeoutMs ?? 0);
    const timeout: ControlAnswer = { status: 504, body: { detail: `Host ${owner}, which runs ${what}, did not answer within ${wait} ms; the action may still happen there: check the ${what.split(' ')[0]}`, code: 'OWNER_TIMEOUT' } };
    const answered = new Promise<ControlAnswer>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve(timeout);
      }, wait);
      this.pending.set(id, (a) => {
        clearTimeout(timer);
        this.pending.delete(id);
        resolve(a);
      });
    });
    const req: ControlRequest = { id, from: this.hostId, node_id: nodeId, action, args };
    const listeners = await this.redis.publish(this.channel('req', owner), JSON.stringify(req));
    if (listeners === 0) {
      // Nobody listens for that host: it is gone (or not yet started); no need to wait.
      this.pending.get(id)?.({ status: 504, body: { detail: `Host ${owner}, which runs ${what}, is not listening for control (stopped or cut off)`, code: 'OWNER_TIMEOUT' } });
    }
    return answered;
  }

  async stop(): Promise<void> {
    for (const resolve of this.pending.values()) resolve({ status: 503, body: { detail: 'this host is stopping', code: 'UNAVAILABLE' } });
    if (this.sub) await this.sub.quit().catch(() => this.sub?.disconnect());
  }
}
