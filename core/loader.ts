import fs from 'node:fs';
import path from 'node:path';
import type { PluginDef } from './plugin';

/** A definition fault found at boot; the message names the plugin and the fault. */
export class BootError extends Error {}

const ID = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

/** Loads the default export of every `<dir>/<name>/index.js`. */
export function discoverPlugins(dir: string): PluginDef[] {
  if (!fs.existsSync(dir)) return [];
  const out: PluginDef[] = [];
  for (const name of fs.readdirSync(dir).sort()) {
    const file = path.join(dir, name, 'index.js');
    if (!fs.existsSync(file)) continue;
    let mod: { default?: PluginDef };
    try {
      mod = require(file) as { default?: PluginDef };
    } catch (err) {
      throw new BootError(`plugin folder "${name}": failed to load: ${(err as Error).message}`);
    }
    const def = mod.default;
    if (!def || typeof def !== 'object' || typeof def.id !== 'string' || !Array.isArray(def.routes) || typeof def.deps !== 'object') {
      throw new BootError(`plugin folder "${name}": the default export is not a definePlugin(...) definition`);
    }
    out.push(def);
  }
  return out;
}

/** The path a route is matched by: parameter names and a trailing slash do not matter. */
function routeKey(method: string, fullPath: string): string {
  let p = fullPath.replace(/\{[^}]+\}/g, '{}');
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  return `${method.toUpperCase()} ${p}`;
}

function paramNames(schema: unknown): string[] | null {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape).sort() : null;
}

/** Which plugin provides each service id ('core' for the host's own). */
export type Providers = Map<string, string>;

/**
 * Checks every definition and returns the plugins in start order: a plugin starts after
 * the plugins whose services it (or a service it provides) uses, and after its `dependsOn`.
 * `coreServices` are the ids the host itself provides.
 */
export function checkPlugins(plugins: PluginDef[], coreServices: string[], reservedRoutes: string[] = []): { ordered: PluginDef[]; providers: Providers } {
  const byId = new Map<string, PluginDef>();
  for (const p of plugins) {
    if (!ID.test(p.id)) throw new BootError(`plugin "${p.id}": id must be lowercase words joined by dashes`);
    if (byId.has(p.id)) throw new BootError(`plugin "${p.id}": id is used by two plugins`);
    byId.set(p.id, p);
  }
  const providers: Providers = new Map(coreServices.map((s) => [s, 'core']));
  for (const p of plugins) {
    for (const s of p.provides) {
      const owner = providers.get(s.ref.id);
      if (owner) throw new BootError(`plugin "${p.id}": provides service "${s.ref.id}", which ${owner === 'core' ? 'core provides' : `plugin "${owner}" provides too`}`);
      providers.set(s.ref.id, p.id);
    }
  }
  const seen = new Map<string, string>(reservedRoutes.map((r) => [r, 'core']));
  const needs = new Map<string, Set<string>>();
  for (const p of plugins) {
    if (typeof p.prefix !== 'string' || (p.prefix !== '' && !/^\/[A-Za-z0-9/_-]*[^/]$/.test(p.prefix))) {
      throw new BootError(`plugin "${p.id}": prefix "${p.prefix}" must be '' or start with '/' and not end with '/'`);
    }
    const after = new Set<string>();
    const uses = (what: string, deps: PluginDef['deps']) => {
      for (const [name, ref] of Object.entries(deps)) {
        const owner = providers.get(ref?.id);
        if (!owner && ref?.optional) continue;
        if (!owner) throw new BootError(`plugin "${p.id}": ${what} needs service "${ref?.id ?? name}", which no plugin provides`);
        if (owner !== 'core' && owner !== p.id) after.add(owner);
      }
    };
    uses('deps', p.deps);
    for (const s of p.provides) uses(`service "${s.ref.id}"`, s.deps);
    for (const d of p.dependsOn) {
      if (!byId.has(d)) throw new BootError(`plugin "${p.id}": depends on unknown plugin "${d}"`);
      after.add(d);
    }
    needs.set(p.id, after);
    checkRoutes(p, seen);
  }
  // Dependency order, refusing cycles.
  const ordered: PluginDef[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (p: PluginDef, chain: string[]) => {
    const s = state.get(p.id);
    if (s === 'done') return;
    if (s === 'visiting') throw new BootError(`plugin "${p.id}": dependency cycle ${[...chain, p.id].join(' -> ')}`);
    state.set(p.id, 'visiting');
    for (const d of needs.get(p.id)!) visit(byId.get(d)!, [...chain, p.id]);
    state.set(p.id, 'done');
    ordered.push(p);
  };
  for (const p of plugins) visit(p, []);
  return { ordered, providers };
}

/** The order a plugin's own services start in: each after the ones of the plugin it uses. */
export function providerOrder(p: PluginDef): PluginDef['provides'] {
  const own = new Map(p.provides.map((s) => [s.ref.id, s]));
  const out: PluginDef['provides'] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (id: string, chain: string[]) => {
    if (state.get(id) === 'done') return;
    if (state.get(id) === 'visiting') throw new BootError(`plugin "${p.id}": service cycle ${[...chain, id].join(' -> ')}`);
    state.set(id, 'visiting');
    for (const ref of Object.values(own.get(id)!.deps)) if (own.has(ref.id)) visit(ref.id, [...chain, id]);
    state.set(id, 'done');
    out.push(own.get(id)!);
  };
  for (const id of own.keys()) visit(id, []);
  return out;
}

function checkRoutes(p: PluginDef, seen: Map<string, string>): void {
  for (const r of p.routes) {
    const where = `plugin "${p.id}": route ${String(r.method).toUpperCase()} ${r.path}`;
    if (!METHODS.has(r.method)) throw new BootError(`${where}: unknown method`);
    if (typeof r.path !== 'string' || !r.path.startsWith('/')) throw new BootError(`${where}: path must start with '/'`);
    if (typeof r.handler !== 'function') throw new BootError(`${where}: has no handler`);
    if (!r.summary) throw new BootError(`${where}: has no summary`);
    if (!r.access) throw new BootError(`${where}: does not say who may call it (access)`);
    r.fullPath = p.prefix + r.path;
    r.pluginId = p.id;
    const inPath = [...r.fullPath.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
    const declared = r.params ? paramNames(r.params) : [];
    if (declared && declared.join() !== inPath.join()) {
      throw new BootError(`${where}: params schema [${declared.join(',')}] does not match the path parameters [${inPath.join(',')}]`);
    }
    const key = routeKey(r.method, r.fullPath);
    const owner = seen.get(key);
    if (owner) throw new BootError(`${where}: ${key} is already declared by ${owner === 'core' ? 'core' : `plugin "${owner}"`}`);
    seen.set(key, p.id);
  }
  for (const s of p.sockets) {
    s.fullPath = p.prefix + s.path;
    s.pluginId = p.id;
    const key = routeKey('WS', s.fullPath);
    const owner = seen.get(key);
    if (owner) throw new BootError(`plugin "${p.id}": socket ${s.fullPath} is already declared by ${owner}`);
    seen.set(key, p.id);
  }
}
