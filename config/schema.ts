import { z } from 'zod';

// The whole configuration, with its defaults. Every key can come from the optional JSON
// config file (CONFIG_FILE); the environment variables in core/config.ts override both.
// Areas of the service add their own section here.
export const configSchema = z.object({
  env: z.enum(['development', 'test', 'production']).default('development'),
  server: z
    .object({
      host: z.string().min(1).default('0.0.0.0'),
      port: z.number().int().min(0).max(65535).default(8000),
      /** Largest accepted request body, in bytes. */
      bodyLimit: z.number().int().positive().default(1024 * 1024),
      /** How long in-flight requests may take to finish at shutdown. */
      shutdownGraceMs: z.number().int().positive().default(10_000),
      /** Time a plugin's start hook may take before boot fails. */
      pluginStartTimeoutMs: z.number().int().positive().default(15_000),
      /** Check handler results against the declared response schema (on in tests). */
      validateResponses: z.boolean().default(false),
    })
    .prefault({}),
  dataDir: z.string().min(1).default('./data'),
  database: z
    .object({
      /** postgres://... selects PostgreSQL; unset means SQLite under dataDir. */
      url: z.string().regex(/^postgres(ql)?:\/\//, 'a postgres:// URL').optional(),
      /** PostgreSQL schema to use (tests give each host its own). */
      schema: z.string().regex(/^[a-z_][a-z0-9_]*$/).optional(),
      sqliteFile: z.string().min(1).default('platform.sqlite'),
    })
    .prefault({}),
  redis: z
    .object({ url: z.string().regex(/^rediss?:\/\//, 'a redis:// URL').optional() })
    .prefault({}),
  log: z
    .object({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    })
    .prefault({}),
  auth: z
    .object({
      /** HMAC secret for tokens; when unset one is generated and kept in dataDir. */
      jwtSecret: z.string().min(32, 'at least 32 characters').optional(),
      issuer: z.string().default('platform-control'),
      audience: z.string().default('platform-control-api'),
      tokenTtlSeconds: z.number().int().positive().default(24 * 3600),
      adminEmail: z.string().email().default('admin@example.com'),
      adminPassword: z.string().min(12, 'at least 12 characters').optional(),
    })
    .prefault({}),
  plugins: z
    .object({
      /** Folder the host discovers plugins in (compiled output). */
      dir: z.string().optional(),
      /** Plugin ids not to load. */
      disabled: z.array(z.string()).default([]),
    })
    .prefault({}),
  mesh: z
    .object({
      /** Folders holding kernels/<domain>/{manifest,worker}.js; empty means the built-in kernels. */
      kernelDirs: z.array(z.string()).default([]),
      /** Load only these domains (all when unset). */
      only: z.array(z.string()).optional(),
      /** Override every manifest's node count / threads per node. */
      nodesPerKernel: z.number().int().min(0).max(64).optional(),
      threadsPerNode: z.number().int().min(1).max(64).optional(),
      /** Per-domain overrides: {"trading": {"nodes": 3, "threads": 2}}. */
      kernels: z.record(z.string(), z.object({ nodes: z.number().int().min(0).max(64).optional(), threads: z.number().int().min(1).max(64).optional() })).default({}),
      /** Heartbeat interval inside every worker, and how many missed beats make a node unhealthy. */
      heartbeatMs: z.number().int().min(10).max(60_000).default(1000),
      missedHeartbeats: z.number().int().min(1).max(100).default(3),
      /** How long a task waits for an eligible node before it gets 503. */
      noNodeWaitMs: z.number().int().min(0).max(60_000).default(2000),
      /** Longest a task may run before it is aborted (504-like 503). */
      taskTimeoutMs: z.number().int().min(100).max(3_600_000).default(30_000),
      /** Tasks a node queues beyond its threads before it counts as full. */
      maxQueuePerNode: z.number().int().min(0).max(100_000).default(256),
      /** Default drain deadline when the request gives none. */
      drainDeadlineSeconds: z.number().int().min(1).max(86_400).default(300),
      health: z
        .object({
          windowSeconds: z.number().int().min(1).max(3600).default(60),
          minSamples: z.number().int().min(1).default(5),
          errorRateUnhealthy: z.number().min(0).max(1).default(0.5),
          loopDelayDegradedMs: z.number().positive().default(200),
          heapDegradedRatio: z.number().gt(0).max(1).default(0.9),
        })
        .prefault({}),
      breaker: z
        .object({
          errorThresholdPercentage: z.number().min(1).max(100).default(50),
          resetTimeoutMs: z.number().int().min(100).default(10_000),
          volumeThreshold: z.number().int().min(1).default(10),
          rollingWindowMs: z.number().int().min(1000).default(10_000),
        })
        .prefault({}),
      outcomes: z.object({ flushMs: z.number().int().min(10).default(1000), batchSize: z.number().int().min(1).default(500) }).prefault({}),
      /** Settings handed to a kernel's workers, by domain (e.g. llm: {base_url, api_key, model}). */
      settings: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
    })
    .prefault({}),
  hub: z
    .object({
      /** Server ping interval; a client that misses a pong by the next ping is dropped. */
      pingIntervalMs: z.number().int().min(100).default(30_000),
      /** A client whose unsent data passes this many bytes is dropped. */
      maxBufferedBytes: z.number().int().min(1024).default(1024 * 1024),
      /** Redis channel for fan-out across hosts (with REDIS_URL). */
      channel: z.string().min(1).default('platform-control:events'),
    })
    .prefault({}),
});

export type Config = z.output<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
