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
  telemetry: z
    .object({
      /** service.name of every span and metric. */
      serviceName: z.string().min(1).default('platform-control'),
      /** HTTP request count and latency by route and status (off only to measure their cost). */
      httpMetrics: z.boolean().default(true),
      /** Most events in one ingest batch (`{events: [...]}`); more answers 413. */
      maxBatch: z.number().int().min(1).max(10_000).default(1000),
      otlp: z
        .object({
          /** Base URL of an OTLP/HTTP collector (e.g. http://collector:4318); set = spans and metrics are exported. */
          endpoint: z.string().regex(/^https?:\/\//, 'an http(s):// URL').optional(),
          exportIntervalMs: z.number().int().min(100).default(15_000),
        })
        .prefault({}),
    })
    .prefault({}),
});

export type Config = z.output<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
