import { EventEmitter } from 'node:events';

/** One event on the bus, as the hub relays it: `{type, timestamp, data}`. */
export interface BusEvent<T = Record<string, unknown>> {
  type: string;
  timestamp: string;
  data: T;
}

type Listener = (event: BusEvent) => void;

/**
 * The in-process event bus. Plugins publish and subscribe here instead of importing
 * each other; the hub relays every event to WebSocket clients.
 */
export class EventBus {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  publish<T extends Record<string, unknown>>(type: string, data: T): BusEvent<T> {
    const event = { type, timestamp: new Date().toISOString(), data };
    this.deliver(event);
    return event;
  }

  /** Delivers an event that already has its timestamp (e.g. one relayed from another host). */
  deliver(event: BusEvent): void {
    this.emitter.emit(event.type, event);
    this.emitter.emit('*', event);
  }

  /** Subscribes to one type, or to every event with '*'. Returns the unsubscribe function. */
  subscribe(type: string, listener: Listener): () => void {
    // A failing listener must not break the publisher or the other listeners.
    const safe: Listener = (e) => {
      try {
        listener(e);
      } catch {
        /* a subscriber's fault stays with the subscriber */
      }
    };
    this.emitter.on(type, safe);
    return () => this.emitter.off(type, safe);
  }
}
