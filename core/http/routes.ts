import type { RouteDef } from '../plugin';

/** A matched route with its raw (still encoded) path parameters. */
export interface Match {
  route: RouteDef;
  /** Shared by every lookup of the same path (see RouteTable.recent): read it, do not change it. */
  params: Readonly<Record<string, string>>;
}

/** What a lookup found: a route, a path served only for other methods, or nothing. */
export type Lookup = { kind: 'route'; match: Match } | { kind: 'method'; allowed: readonly string[] } | { kind: 'none' };

/** Entries kept in RouteTable.recent, and the longest path kept there. */
export const RECENT_MAX = 1000;
const RECENT_PATH_MAX = 256;

interface Pattern {
  route: RouteDef;
  /** One entry per segment: a lowercased literal, or null for a parameter. */
  segments: Array<string | null>;
  names: string[];
}

/**
 * Finds the declared route of a request with one map lookup for literal paths and a short
 * scan of same-length patterns for parameterised ones. Express's router tests every route's
 * regular expression in turn (two layers per route, twice with the /api alias), which was
 * the largest single cost of a cheap request. Matching rules are Express's defaults:
 * case-insensitive, a trailing slash ignored, a parameter is one non-empty segment. A
 * literal path wins over a pattern that also matches it.
 */
export class RouteTable {
  private readonly exact = new Map<string, RouteDef>();
  private readonly patterns = new Map<string, Pattern[]>();
  /** Methods served at each path shape, for 405 and OPTIONS. */
  private readonly methods = new Map<string, Set<string>>();
  private readonly shapes: Array<{ segments: Array<string | null>; key: string }> = [];
  /**
   * Recent lookups by method and path. Clients call the same few paths again and again, and
   * a lookup (the /api alias, normalising, splitting, matching) costs ~5 us against ~0.1 us
   * for a map hit. Bounded: emptied when full; long paths are not kept.
   */
  private readonly recent = new Map<string, Lookup>();

  /** Lookups remembered (at most RECENT_MAX). */
  get remembered(): number {
    return this.recent.size;
  }

  constructor(routes: RouteDef[]) {
    for (const route of routes) {
      const method = route.method.toUpperCase();
      const segments = splitPath(normaliseTemplate(route.fullPath!)).map((s) => (/^\{.+\}$/.test(s) ? null : s.toLowerCase()));
      const shapeKey = segments.map((s) => s ?? '{}').join('/');
      let allowed = this.methods.get(shapeKey);
      if (!allowed) {
        allowed = new Set();
        this.methods.set(shapeKey, allowed);
        this.shapes.push({ segments, key: shapeKey });
      }
      allowed.add(method);
      if (!segments.includes(null)) {
        this.exact.set(`${method} /${segments.join('/')}`, route);
        continue;
      }
      const names = [...route.fullPath!.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const key = `${method} ${segments.length}`;
      const list = this.patterns.get(key) ?? [];
      list.push({ route, segments, names });
      this.patterns.set(key, list);
    }
  }

  /** `path` is the request path without its query string; HEAD is served by GET routes. */
  find(method: string, path: string): Lookup {
    if (path.length > RECENT_PATH_MAX) return this.lookup(method, path);
    const key = `${method} ${path}`;
    let found = this.recent.get(key);
    if (found) return found;
    found = this.lookup(method, path);
    if (this.recent.size >= RECENT_MAX) this.recent.clear();
    this.recent.set(key, found);
    return found;
  }

  private lookup(method: string, path: string): Lookup {
    const m = method === 'HEAD' ? 'GET' : method;
    const stripped = stripApi(path);
    const found = (stripped !== null && this.match(m, stripped)) || this.match(m, path);
    if (found) return { kind: 'route', match: found };
    const allowed = (stripped !== null && this.allowedAt(stripped)) || this.allowedAt(path);
    return allowed ? { kind: 'method', allowed } : { kind: 'none' };
  }

  private match(method: string, path: string): Match | null {
    const p = normalisePath(path);
    const lower = p.toLowerCase();
    const exact = this.exact.get(`${method} ${lower}`);
    if (exact) return { route: exact, params: {} };
    const candidates = this.patterns.get(`${method} ${countSegments(lower)}`);
    if (!candidates) return null;
    const parts = splitPath(p);
    for (const c of candidates) {
      const params = matchSegments(c, parts);
      if (params) return { route: c.route, params };
    }
    return null;
  }

  private allowedAt(path: string): string[] | null {
    const parts = splitPath(normalisePath(path));
    for (const shape of this.shapes) {
      if (shape.segments.length !== parts.length) continue;
      if (shape.segments.every((s, i) => (s === null ? parts[i] !== '' : s === parts[i].toLowerCase()))) {
        const allowed = [...this.methods.get(shape.key)!];
        if (allowed.includes('GET')) allowed.push('HEAD');
        return allowed.sort();
      }
    }
    return null;
  }
}

function matchSegments(p: Pattern, parts: string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  let n = 0;
  for (let i = 0; i < parts.length; i++) {
    const s = p.segments[i];
    if (s === null) {
      if (parts[i] === '') return null;
      params[p.names[n++]] = parts[i];
    } else if (s !== parts[i].toLowerCase()) {
      return null;
    }
  }
  return params;
}

/** The path without the `/api` alias prefix, or null when it has none. */
function stripApi(path: string): string | null {
  if (path === '/api') return '/';
  return path.startsWith('/api/') ? path.slice(4) : null;
}

/** A trailing slash does not matter (`/health` and `/health/` are one route). */
export function normalisePath(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

function normaliseTemplate(path: string): string {
  return normalisePath(path) || '/';
}

function splitPath(path: string): string[] {
  return path === '/' ? [] : path.slice(1).split('/');
}

function countSegments(path: string): number {
  if (path === '/') return 0;
  let n = 0;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 47) n++;
  return n;
}

/** Path parameters decoded; null when one is not valid percent-encoding. */
export function decodeParams(raw: Readonly<Record<string, string>>): Record<string, string> | null {
  const out: Record<string, string> = {};
  for (const k in raw) {
    const v = raw[k];
    if (!v.includes('%')) {
      out[k] = v;
      continue;
    }
    try {
      out[k] = decodeURIComponent(v);
    } catch {
      return null;
    }
  }
  return out;
}
