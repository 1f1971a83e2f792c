import { securityRef } from '../../core/contracts/security';
import { telemetryStoreRef } from '../../core/contracts/telemetry';
import { eventStoreRef } from './store/ref';
import { optional, type Resolved } from '../../core/plugin';
import { core } from '../../core/services';

/** The services the observability plugin's routes use. */
export const deps = { db: core.db, auth: core.auth, telemetryStore: telemetryStoreRef, events: eventStoreRef, lifecycle: core.lifecycle, actions: core.actions, sec: optional(securityRef) };
export type Deps = Resolved<typeof deps>;
