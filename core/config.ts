import fs from 'node:fs';
import { z } from 'zod';
import { configSchema, type Config } from '../config/schema';

export type { Config };

export class ConfigError extends Error {}

type Json = Record<string, unknown>;

// Environment variable -> config key path, and how to read its text.
const ENV: Array<[string, string[], 'string' | 'int' | 'list']> = [
  ['PORT', ['server', 'port'], 'int'],
  ['HOST', ['server', 'host'], 'string'],
  ['BODY_LIMIT', ['server', 'bodyLimit'], 'int'],
  ['DATA_DIR', ['dataDir'], 'string'],
  ['DATABASE_URL', ['database', 'url'], 'string'],
  ['REDIS_URL', ['redis', 'url'], 'string'],
  ['CLUSTER_HOST_ID', ['cluster', 'hostId'], 'string'],
  ['CLUSTER_URL', ['cluster', 'url'], 'string'],
  ['CLUSTER_PREFIX', ['cluster', 'prefix'], 'string'],
  ['CLUSTER_LEASE_MS', ['cluster', 'leaseMs'], 'int'],
  ['JWT_SECRET', ['auth', 'jwtSecret'], 'string'],
  ['LOG_LEVEL', ['log', 'level'], 'string'],
  ['ADMIN_EMAIL', ['auth', 'adminEmail'], 'string'],
  ['ADMIN_PASSWORD', ['auth', 'adminPassword'], 'string'],
  ['NODE_ENV', ['env'], 'string'],
  ['SMTP_URL', ['mail', 'smtpUrl'], 'string'],
  ['MAIL_FROM', ['mail', 'from'], 'string'],
  ['LLM_BASE_URL', ['mesh', 'settings', 'llm', 'base_url'], 'string'],
  ['LLM_API_KEY', ['mesh', 'settings', 'llm', 'api_key'], 'string'],
  ['LLM_MODEL', ['mesh', 'settings', 'llm', 'model'], 'string'],
  ['OTEL_EXPORTER_OTLP_ENDPOINT', ['telemetry', 'otlp', 'endpoint'], 'string'],
  ['WEBHOOK_SCHEDULER_SECRET', ['webhooks', 'schedulerSecret'], 'string'],
  ['WEBHOOK_SCHEDULER_TENANT', ['webhooks', 'schedulerTenant'], 'string'],
];

function setPath(obj: Json, path: string[], value: unknown): void {
  let cur = obj;
  for (const key of path.slice(0, -1)) {
    if (typeof cur[key] !== 'object' || cur[key] === null) cur[key] = {};
    cur = cur[key] as Json;
  }
  cur[path[path.length - 1]] = value;
}

function envValue(name: string, text: string, kind: 'string' | 'int' | 'list'): unknown {
  if (kind === 'int') {
    if (!/^\d+$/.test(text.trim())) throw new ConfigError(`${name}: expected a whole number, got "${text}"`);
    return Number(text);
  }
  if (kind === 'list') return text.split(',').map((s) => s.trim()).filter(Boolean);
  return text;
}

export function deepMerge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? deepMerge(b as Json, v as Json)
        : v;
  }
  return out;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const key = issue.path.join('.') || '(root)';
  return `config key "${key}": ${issue.message}`;
}

/** Reads the config file (CONFIG_FILE), applies the environment and checks it all. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Json = {}): Config {
  let raw: Json = {};
  const file = env.CONFIG_FILE;
  if (file) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new ConfigError(`CONFIG_FILE: cannot read ${file}: ${(e as Error).message}`);
    }
    try {
      raw = JSON.parse(text) as Json;
    } catch (e) {
      throw new ConfigError(`CONFIG_FILE: ${file} is not valid JSON: ${(e as Error).message}`);
    }
  }
  for (const [name, path, kind] of ENV) {
    const text = env[name];
    if (text !== undefined && text !== '') setPath(raw, path, envValue(name, text, kind));
  }
  raw = deepMerge(raw, overrides);
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(`invalid configuration:\n  ${parsed.error.issues.map(describeIssue).join('\n  ')}`);
  }
  return parsed.data;
}
