import type { ActionLog } from './actions';
import type { Config } from './config';
import type { Db } from './db';
import type { EventBus } from './events';
import type { Logger } from './logger';
import type { AuthService } from './auth/service';
import type { HealthRegistry } from './health';
import type { Pipeline } from './http/pipeline';
import type { Lifecycle } from './lifecycle';
import type { Redis } from './redis';
import type { Accounts } from './auth/accounts';
import type { RateLimiter } from './limits';
import type { Mesh } from './mesh/mesh';
import type { Hub } from './hub/hub';
import type { TelemetryService } from './telemetry';
import type { ChaosService } from './chaos/service';

/**
 * The core services a plugin may ask for by name. Each area of core adds its service
 * here; plugins list the names they use in `definePlugin({services})`.
 */
export interface Services {
  config: Config;
  db: Db;
  log: Logger;
  events: EventBus;
  auth: AuthService;
  health: HealthRegistry;
  /** Hooks on every route (rate limits, request metrics). */
  pipeline: Pipeline;
  lifecycle: Lifecycle;
  /** Null unless REDIS_URL is set. */
  redis: Redis | null;
  /** The record of every control action (manual and automated). */
  actions: ActionLog;
  /** Per-tenant (by plan) and per-address request budgets. */
  limits: RateLimiter;
  /** Registration, login, sessions (refresh, logout) and password reset. */
  accounts: Accounts;
  /** The kernel mesh: kernels, nodes, tasks, control, health, stats (core/mesh). */
  mesh: Mesh;
  /** The live stream of /ops/stream (core/hub). */
  hub: Hub;
  /** OpenTelemetry meter and tracer, the Prometheus text, kernel metrics. */
  telemetry: TelemetryService;
  /** Chaos experiments on the live mesh: scenarios' runs, aborts, halt, journal (core/chaos). */
  chaos: ChaosService;
}

export type ServiceName = keyof Services;
