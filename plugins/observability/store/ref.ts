import { createServiceRef } from '../../../core/plugin';
import type { TelemetryEvents } from './index';

/** The plugin's own handle on its store (the list and trace queries beyond the contract). */
export const eventStoreRef = createServiceRef<TelemetryEvents>('observability.events');
