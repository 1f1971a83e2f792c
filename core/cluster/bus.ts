// Control of a node from any host (docs/scale-out.md): the host that gets the call sends it
// to the host that runs the node over Redis pub/sub and waits for that host's answer. The
// owner acts (and records the action and its events) once; the caller gets its exact answer.
import crypto from 'node:crypto';
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

export class ControlBus {
  private sub: Redis | null = null;
  private readonly pending = new Map<string, (a: ControlAnswer) => void>();

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

  private async answer(req: ControlRequest): Promise<void> {
    let a: ControlAnswer;
    try {
      a = await this.run(req);
    } catch (err) {
      this.log.error({ err: (err as Error).message, action: req.action, node: req.node_id }, 'cluster control: the action failed on its owner');
      a = { status: 502, body: { detail: `host ${this.hostId} failed to run ${req.action} on node ${req.node_id} (request id ${req.id}; its log has the details)`, code: 'OWNER_FAILED' } };
    }
    await this.redis.publish(this.channel('ans', req.from), JSON.stringify({ id: req.id, ...a })).catch((err: Error) => this.log.warn({ err: err.message }, 'cluster control: the answer could not be sent'));
  }

  /** Sends `action` on `nodeId` to `owner`; its answer, or 504 OWNER_TIMEOUT when none comes in time. */
  async request(owner: string, nodeId: string, action: string, args: Record<string, unknown>): Promise<ControlAnswer> {
    const id = crypto.randomUUID();
    const timeout: ControlAnswer = { status: 504, body: { detail: `Host ${owner}, which runs node ${nodeId}, did not answer within ${this.timeoutMs} ms; the action may still happen there: check the node`, code: 'OWNER_TIMEOUT' } };
    const answered = new Promise<ControlAnswer>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve(timeout);
      }, this.timeoutMs);
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
      this.pending.get(id)?.({ status: 504, body: { detail: `Host ${owner}, which runs node ${nodeId}, is not listening for control (stopped or cut off)`, code: 'OWNER_TIMEOUT' } });
    }
    return answered;
  }

  async stop(): Promise<void> {
    for (const resolve of this.pending.values()) resolve({ status: 503, body: { detail: 'this host is stopping', code: 'UNAVAILABLE' } });
    if (this.sub) await this.sub.quit().catch(() => this.sub?.disconnect());
  }
}
