import crypto from 'node:crypto';
import { WebSocket } from 'ws';
import type { Config } from '../config';
import type { BusEvent, EventBus } from '../events';
import type { Logger } from '../logger';
import type { Redis } from '../redis';
import { roleAtLeast, type Caller } from '../roles';

/**
 * Who may see an event, by the same rule as the matching HTTP reads. Mesh events carry no
 * tenant_id and go to every client. An event with a tenant_id (a tenant's incident,
 * action or workflow_status) goes to that tenant's clients only; one whose tenant_id is
 * null is platform-wide (an automatic incident, an action on the mesh) and goes to
 * operators and admins.
 */
export function visibleTo(e: BusEvent, caller: Caller | null): boolean {
  if (!e.data || !Object.prototype.hasOwnProperty.call(e.data, 'tenant_id')) return true;
  if (!caller) return false;
  const tenant = (e.data as { tenant_id?: unknown }).tenant_id;
  if (tenant === null || tenant === undefined) return roleAtLeast(caller.role, 'operator');
  return caller.tenantId === tenant;
}

interface Client {
  ws: WebSocket;
  caller: Caller | null;
  /** Event types the client wants; null: all. */
  types: Set<string> | null;
  alive: boolean;
}

/** Envelope of an event on the Redis channel: the host it came from, and the event. */
interface Relayed {
  origin: string;
  /** This origin's count of relayed events: receivers keep each origin's order and see gaps. */
  seq: number;
  event: BusEvent;
}

/** The parts of ws's per-socket Sender (8.x) the pre-framed broadcast uses. */
interface RawSender {
  _state: number;
  _queue: unknown[];
  sendFrame(list: Buffer[], cb?: () => void): void;
}

// ws exports its Sender (ws/lib/sender.js); its type declarations do not.
const Sender = (WebSocket as unknown as { Sender: { frame(data: Buffer, o: { fin: boolean; opcode: number; mask: boolean; readOnly: boolean; rsv1: boolean }): Buffer[] } }).Sender;

/** Origins remembered for ordering (a host's hub gets a new id at each start). */
const ORIGINS_KEPT = 1000;

/**
 * The live stream (DESIGN §6): relays every bus event to the WebSocket clients of
 * /ops/stream as {type, timestamp, data}; with Redis, events fan out to the other hosts.
 */
export class Hub {
  readonly hostId = crypto.randomUUID();
  readonly clients = new Set<Client>();
  /** Clients dropped for a full send buffer or a missed pong. */
  dropped = { slow: 0, unresponsive: 0 };
  sent = 0;
  /** Events of other hosts that never arrived (a Redis reconnect loses pub/sub messages). */
  relayGaps = 0;
  private relayed = 0;
  private readonly lastSeq = new Map<string, number>();
  private unsubscribe: (() => void) | null = null;
  private pinger: NodeJS.Timeout | null = null;
  private rechecker: NodeJS.Timeout | null = null;
  private sub: Redis | null = null;

  constructor(
    private readonly cfg: Config['hub'],
    private readonly events: EventBus,
    private readonly redis: Redis | null,
    private readonly log: Logger,
    /** The mesh as a new client first sees it. */
    private readonly snapshot: () => Record<string, unknown>,
    /** Whether a client's credentials still hold (a revoked or expired token closes the socket). */
    private readonly stillValid: (caller: Caller) => Promise<boolean> = async () => true,
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = this.events.subscribe('*', (e) => {
      this.broadcast(e);
      if (this.redis) {
        const msg: Relayed = { origin: this.hostId, seq: ++this.relayed, event: e };
        this.redis.publish(this.cfg.channel, JSON.stringify(msg)).catch(() => undefined);
      }
    });
    this.pinger = setInterval(() => this.pingAll(), this.cfg.pingIntervalMs);
    this.pinger.unref();
    this.rechecker = setInterval(() => void this.recheckAll(), this.cfg.recheckMs);
    this.rechecker.unref();
    if (this.redis) {
      // A subscribed connection can do nothing else, so the hub has its own.
      const sub = this.redis.duplicate();
      this.sub = sub;
      sub.on('error', () => undefined);
      sub.on('message', (_channel: string, text: string) => {
        let msg: Relayed;
        try {
          msg = JSON.parse(text) as Relayed;
        } catch {
          return;
        }
        if (!msg || msg.origin === this.hostId || typeof msg.event?.type !== 'string' || !Number.isInteger(msg.seq)) return;
        if (!this.inOrder(msg.origin, msg.seq)) return;
        // Another host's events go to this host's clients only (not onto the local bus),
        // marked with the host they came from and their place in its sequence.
        this.broadcast({ ...msg.event, origin: msg.origin, seq: msg.seq } as BusEvent);
      });
      await sub.subscribe(this.cfg.channel).catch((err: Error) => this.log.warn({ err: err.message }, 'hub: redis subscribe failed; fan-out across hosts is off'));
    }
  }

  /**
   * Each host publishes its events on one Redis connection, in the order its bus had them, and
   * events about a node are published by the host that runs it: so a node's events arrive in
   * order. A message older than one already passed on (a duplicate) is dropped; a gap is counted.
   */
  private inOrder(origin: string, seq: number): boolean {
    const last = this.lastSeq.get(origin);
    if (last !== undefined && seq <= last) return false;
    if (last !== undefined && seq > last + 1) {
      this.relayGaps += seq - last - 1;
      this.log.warn({ origin, missed: seq - last - 1 }, 'hub: events of another host were lost (Redis reconnect?)');
    }
    this.lastSeq.delete(origin);
    this.lastSeq.set(origin, seq);
    if (this.lastSeq.size > ORIGINS_KEPT) this.lastSeq.delete(this.lastSeq.keys().next().value!);
    return true;
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    if (this.pinger) clearInterval(this.pinger);
    if (this.rechecker) clearInterval(this.rechecker);
    for (const c of this.clients) c.ws.terminate();
    this.clients.clear();
    if (this.sub) await this.sub.quit().catch(() => this.sub?.disconnect());
  }

  accept(ws: WebSocket, caller: Caller | null): void {
    const client: Client = { ws, caller, types: null, alive: true };
    this.clients.add(client);
    ws.on('pong', () => (client.alive = true));
    ws.on('close', () => this.clients.delete(client));
    ws.on('error', () => this.clients.delete(client));
    // ws hands a Buffer to message listeners (its default binaryType, 'nodebuffer').
    ws.on('message', (raw, isBinary) => this.onMessage(client, isBinary ? null : (raw as Buffer).toString('utf8')));
    this.sendTo(client, JSON.stringify({ type: 'snapshot', timestamp: new Date().toISOString(), data: this.snapshot() }));
  }

  private reply(client: Client, type: string, data: Record<string, unknown>): void {
    this.sendTo(client, JSON.stringify({ type, timestamp: new Date().toISOString(), data }));
  }

  private onMessage(client: Client, text: string | null): void {
    let msg: { type?: unknown; types?: unknown };
    try {
      msg = text === null ? null : JSON.parse(text);
    } catch {
      return this.reply(client, 'error', { detail: 'message is not JSON' });
    }
    if (!msg || typeof msg !== 'object' || typeof msg.type !== 'string') return this.reply(client, 'error', { detail: 'message must be a JSON object with a "type"' });
    switch (msg.type) {
      case 'subscribe': {
        const types = msg.types;
        if (!Array.isArray(types) || types.length > 100 || !types.every((t) => typeof t === 'string' && t.length > 0 && t.length <= 64)) {
          return this.reply(client, 'error', { detail: '"types" must be a list of event type names (at most 100); [] or ["*"] for all' });
        }
        client.types = types.length === 0 || types.includes('*') ? null : new Set(types as string[]);
        return this.reply(client, 'subscribed', { types: client.types ? [...client.types] : ['*'] });
      }
      case 'ping':
        return this.reply(client, 'pong', {});
      case 'snapshot':
        return this.reply(client, 'snapshot', this.snapshot());
      default:
        return this.reply(client, 'error', { detail: `unknown message type "${msg.type}"; known: subscribe, ping, snapshot` });
    }
  }

  /** Sends one event to every client that wants it; serialised and encoded once. */
  broadcast(e: BusEvent): void {
    if (this.clients.size === 0) return;
    const data = Buffer.from(JSON.stringify(e));
    // Framed once for every client (server frames are not masked, so they are all the same
    // bytes): each socket then gets one write instead of a header, a payload and a cork.
    const frame = Buffer.concat(Sender.frame(data, { fin: true, opcode: 1, mask: false, readOnly: true, rsv1: false }));
    for (const c of this.clients) {
      if (c.types && !c.types.has(e.type)) continue;
      if (!visibleTo(e, c.caller)) continue;
      this.sendTo(c, data, frame);
    }
  }

  private sendTo(c: Client, data: string | Buffer, frame?: Buffer): void {
    if (c.ws.readyState !== c.ws.OPEN) return;
    // A client that does not read holds memory: past the bound it is dropped, not buffered.
    if (c.ws.bufferedAmount + Buffer.byteLength(data) > this.cfg.maxBufferedBytes) {
      this.dropped.slow++;
      this.clients.delete(c);
      c.ws.terminate();
      return;
    }
    const sender = (c.ws as unknown as { _sender?: RawSender })._sender;
    // ws's own path whenever its sender is busy (a frame being compressed or queued).
    if (frame && sender && sender._state === 0 && sender._queue.length === 0 && typeof sender.sendFrame === 'function') sender.sendFrame([frame]);
    else c.ws.send(data, { binary: false });
    this.sent++;
  }

  /** A token that expired or was revoked after the upgrade ends its connection (code 4401). */
  private async recheckAll(): Promise<void> {
    for (const c of [...this.clients]) {
      if (!c.caller) continue;
      const ok = await this.stillValid(c.caller).catch(() => true);
      if (ok) continue;
      this.clients.delete(c);
      c.ws.close(4401, 'token expired or revoked');
      // A client that does not answer the close handshake is cut off.
      setTimeout(() => c.ws.terminate(), 1000).unref();
    }
  }

  private pingAll(): void {
    for (const c of this.clients) {
      if (!c.alive) {
        this.dropped.unresponsive++;
        this.clients.delete(c);
        c.ws.terminate();
        continue;
      }
      c.alive = false;
      c.ws.ping();
    }
  }
}
