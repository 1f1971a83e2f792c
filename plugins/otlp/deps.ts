import { telemetryStoreRef } from '../../core/contracts/telemetry';
import { createServiceRef, type Resolved } from '../../core/plugin';
import { core } from '../../core/services';
import type { Gate } from './gate';

/** The bound on concurrent exports: one per host, made by the host. */
export const gateRef = createServiceRef<Gate>('otlp.gate');

/** The services the receiver's routes use. */
export const deps = { db: core.db, config: core.config, lifecycle: core.lifecycle, log: core.log, telemetry: telemetryStoreRef, gate: gateRef };
export type Deps = Resolved<typeof deps>;
