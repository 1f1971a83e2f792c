import fs from 'node:fs';
import path from 'node:path';
import { SERVICE_NAMES } from '../../core/services';
import { checkPlugins, discoverPlugins } from '../../core/loader';

export interface SpecEndpoint {
  method: string;
  path: string;
  section: string;
}

const ROOT = path.resolve(__dirname, '..', '..', '..');

export function specEndpoints(): SpecEndpoint[] {
  const text = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'endpoints.tsv'), 'utf8');
  return text
    .split('\n')
    .slice(1)
    .filter((l) => l.trim())
    .map((l) => {
      const [method, p, section] = l.split('\t');
      return { method: method.toUpperCase(), path: p, section };
    });
}

/** How a request is matched: no /api prefix, no trailing slash, parameter names erased. */
export function matchKey(method: string, p: string): string {
  let q = p.startsWith('/api/') ? p.slice(4) : p;
  if (q.length > 1 && q.endsWith('/')) q = q.slice(0, -1);
  return `${method.toUpperCase()} ${q.replace(/\{[^}]+\}/g, '{}')}`;
}

/** Every route and socket the discovered plugins declare, as `METHOD path`. */
export function servedRoutes(): Array<{ method: string; path: string; plugin: string }> {
  const plugins = checkPlugins(discoverPlugins(path.join(ROOT, 'dist', 'plugins')), SERVICE_NAMES).ordered;
  return plugins.flatMap((p) => [
    ...p.routes.map((r) => ({ method: r.method.toUpperCase(), path: r.fullPath!, plugin: p.id })),
    ...(p.sockets ?? []).map((s) => ({ method: 'WS', path: s.fullPath!, plugin: p.id })),
  ]);
}

