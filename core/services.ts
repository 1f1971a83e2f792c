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
import type { Revocations } from './auth/revocations';
import type { Mailer } from './mail';
import type { RateLimiter } from './limits';
import type { Mesh } from './mesh/mesh';
import type { Hub } from './hub/hub';
import type { Leases } from './leases';
import type { TelemetryService } from './telemetry';
import { createServiceRef, type ServiceRef } from './plugin';

/** The time source; tests replace it to move time without waiting. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** The core services: the host's own concerns. Plugins reach them through `core.<name>`. */
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
  /** Revoked tokens (checked on every token): the auth plugin's logout and reset write them. */
  revocations: Revocations;
  /** The kernel mesh: kernels, nodes, tasks, control, health, stats (core/mesh). */
  mesh: Mesh;
  /** The live stream of /ops/stream (core/hub). */
  hub: Hub;
  /** OpenTelemetry meter and tracer, the Prometheus text, kernel metrics. */
  telemetry: TelemetryService;
  /** The time source. */
  clock: Clock;
  /** Outgoing mail: written to the outbox, sent by SMTP when configured. */
  mailer: Mailer;
  /** Leader leases: run a job on one host at a time, with takeover (core/leases.ts). */
  leases: Leases;
}

export type ServiceName = keyof Services;

/** References to the core services, for a plugin's `deps`: `{ db: core.db }`. */
export const core: { [K in ServiceName]: ServiceRef<Services[K]> } = {
  config: createServiceRef('config'),
  db: createServiceRef('db'),
  log: createServiceRef('log'),
  events: createServiceRef('events'),
  auth: createServiceRef('auth'),
  health: createServiceRef('health'),
  pipeline: createServiceRef('pipeline'),
  lifecycle: createServiceRef('lifecycle'),
  redis: createServiceRef('redis'),
  actions: createServiceRef('actions'),
  limits: createServiceRef('limits'),
  revocations: createServiceRef('revocations'),
  mesh: createServiceRef('mesh'),
  hub: createServiceRef('hub'),
  telemetry: createServiceRef('telemetry'),
  clock: createServiceRef('clock'),
  mailer: createServiceRef('mailer'),
  leases: createServiceRef('leases'),
};

export const SERVICE_NAMES = Object.keys(core) as ServiceName[];
