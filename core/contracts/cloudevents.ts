// Our events in the CloudEvents 1.0 format: provided by plugin `interop` (which owns the
// type catalogue), used by plugin `alerts` for subscriptions that ask for CloudEvents.
import type { BusEvent } from '../events';
import { createServiceRef } from '../plugin';

export interface CloudEventsFormat {
  /** A bus event as a CloudEvent in structured JSON mode, validated by the `cloudevents` SDK. */
  fromBusEvent(e: BusEvent, id: string): Record<string, unknown>;
}

export const cloudEventsRef = createServiceRef<CloudEventsFormat>('interop.cloudevents');
