import fs from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { configSchema } from '../../../config/schema';
import type { Config } from '../../../core/config';
import type { Db, Migration } from '../../../core/db';
import { invalid } from '../../../core/errors';
import type { Mesh } from '../../../core/mesh/mesh';
import { NotConfigured } from '../errors';

/** What an upgrade compares: a build's plugins (with migrations), kernels (with tasks) and config keys. */
export interface Build {
  name: string;
  plugins: Array<{ id: string; migrations: Migration[] }>;
  kernels: Array<{ domain: string; tasks: string[] }>;
  configKeys: string[] | null;
}

const loadModule = (file: string): any => {
  const mod = require(file);
  return mod?.default ?? mod;
};

function pluginsIn(dir: string): Build['plugins'] {
  if (!fs.existsSync(dir)) return [];
  const out: Build['plugins'] = [];
  for (const name of fs.readdirSync(dir).sort()) {
    const file = path.join(dir, name, 'index.js');
    if (!fs.existsSync(file)) continue;
    const def = loadModule(file);
    if (!def || typeof def.id !== 'string') throw new Error(`plugins/${name}/index.js has no plugin definition`);
    out.push({ id: def.id, migrations: Array.isArray(def.migrations) ? def.migrations : [] });
  }
  return out;
}

/** Dotted keys of a zod object schema, through defaults and optionals. */
export function keysOf(schema: z.ZodType, prefix = '', depth = 0): string[] {
  let s: any = schema;
  for (let i = 0; i < 5 && s?._zod?.def && !s.shape; i++) s = s._zod.def.innerType ?? s._zod.def.in ?? null;
  if (!s?.shape || depth > 3) return prefix ? [prefix] : [];
  return Object.entries(s.shape as Record<string, z.ZodType>).flatMap(([k, v]) => {
    const key = prefix ? `${prefix}.${k}` : k;
    const inner = keysOf(v, key, depth + 1);
    return inner.length ? inner : [key];
  });
}

/** The build that is running now. */
export function runningBuild(config: Config, mesh: Mesh): Build {
  const dir = config.plugins.dir ?? path.resolve(__dirname, '..', '..');
  return {
    name: 'running',
    plugins: pluginsIn(dir).filter((p) => !config.plugins.disabled.includes(p.id)),
    kernels: mesh.kernels().map((k) => ({ domain: k.id, tasks: [...k.tasks].sort() })),
    configKeys: keysOf(configSchema),
  };
}

/** A candidate build: automation.upgrade.candidatesDir/<name>/{plugins,kernels,config}. */
export function candidateBuild(config: Config, name: string): Build {
  const root = config.automation.upgrade.candidatesDir;
  if (!root) throw new NotConfigured('automation.upgrade.candidatesDir');
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name) || name.includes('..')) throw invalid(['body', 'candidate'], 'a folder name (letters, digits, dot, dash, underscore)');
  const dir = path.join(root, name);
  if (!fs.existsSync(dir)) throw invalid(['body', 'candidate'], `no candidate build "${name}" in automation.upgrade.candidatesDir`);
  const kernels: Build['kernels'] = [];
  const kdir = path.join(dir, 'kernels');
  if (fs.existsSync(kdir)) {
    for (const d of fs.readdirSync(kdir).sort()) {
      const file = path.join(kdir, d, 'manifest.js');
      if (!fs.existsSync(file)) continue;
      const m = loadModule(file);
      kernels.push({ domain: m.domain, tasks: Object.keys(m.tasks ?? {}).sort() });
    }
  }
  const schemaFile = path.join(dir, 'config', 'schema.js');
  const schema = fs.existsSync(schemaFile) ? (require(schemaFile) as { configSchema?: z.ZodType }).configSchema : undefined;
  return { name, plugins: pluginsIn(path.join(dir, 'plugins')), kernels, configKeys: schema ? keysOf(schema) : null };
}

/** The difference between the running build and a candidate, with the migrations the database lacks. */
export async function compare(db: Db, running: Build, candidate: Build) {
  const applied = new Set(((await db('schema_migrations').select('name')) as Array<{ name: string }>).map((r) => r.name));
  const pending: Record<string, string[]> = {};
  for (const p of candidate.plugins) {
    const names = p.migrations.map((m) => m.name).filter((n) => !applied.has(`${p.id}/${n}`));
    if (names.length) pending[p.id] = names;
  }
  const ids = (b: Build) => new Set(b.plugins.map((p) => p.id));
  const before = new Map(running.kernels.map((k) => [k.domain, k.tasks]));
  const after = new Map(candidate.kernels.map((k) => [k.domain, k.tasks]));
  // A candidate without kernels/ keeps the running kernels.
  const kernelsGiven = candidate.kernels.length > 0;
  const changed = kernelsGiven
    ? [...after].filter(([d]) => before.has(d)).map(([d, t]) => ({ domain: d, tasks_added: t.filter((x) => !before.get(d)!.includes(x)), tasks_removed: before.get(d)!.filter((x) => !t.includes(x)) })).filter((c) => c.tasks_added.length || c.tasks_removed.length)
    : [];
  return {
    pending_migrations: pending,
    pending_count: Object.values(pending).reduce((n, l) => n + l.length, 0),
    plugins_added: [...ids(candidate)].filter((i) => !ids(running).has(i)),
    plugins_removed: candidate.name === 'running' ? [] : [...ids(running)].filter((i) => !ids(candidate).has(i)),
    kernels: {
      compared: kernelsGiven,
      added: kernelsGiven ? [...after.keys()].filter((d) => !before.has(d)) : [],
      removed: kernelsGiven ? [...before.keys()].filter((d) => !after.has(d)) : [],
      changed,
    },
    config_keys: candidate.configKeys && running.configKeys
      ? { compared: true, added: candidate.configKeys.filter((k) => !running.configKeys!.includes(k)), removed: running.configKeys.filter((k) => !candidate.configKeys!.includes(k)) }
      : { compared: false, added: [] as string[], removed: [] as string[] },
  };
}
