import type { Resolved } from '../../core/plugin';
import { core } from '../../core/services';

/** The services the observability plugin's routes use. */
export const deps = { db: core.db, auth: core.auth, telemetry: core.telemetry, lifecycle: core.lifecycle, actions: core.actions };
export type Deps = Resolved<typeof deps>;
