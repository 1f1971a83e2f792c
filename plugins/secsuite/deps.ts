import { securityRef } from '../../core/contracts/security';
import type { Resolved } from '../../core/plugin';
import { core } from '../../core/services';

export const deps = { db: core.db, config: core.config, clock: core.clock, log: core.log, mesh: core.mesh, sec: securityRef };
export type Deps = Resolved<typeof deps>;
