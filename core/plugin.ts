import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import type { WebSocket } from 'ws';
import { z } from 'zod';
import type { Migration } from './db';
import type { Access, Caller } from './roles';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

type AnySchema = z.ZodType;
type Out<S> = S extends z.ZodType ? z.output<S> : Record<string, never>;
type In<S> = S extends z.ZodType ? z.input<S> : unknown;

// ---------------------------------------------------------------------------------------
// Services: typed references, resolved by the host (Backstage's createServiceRef as model)

/**
 * A reference to a service by id. The type parameter is carried by a phantom field so that
 * `Resolved<deps>` knows what each reference resolves to.
 */
export interface ServiceRef<T> {
  readonly id: string;
  /** Set by optional(): resolves to null when nobody provides the service. */
  readonly optional?: boolean;
  readonly __type?: (t: T) => T;
}

export function createServiceRef<T>(id: string): ServiceRef<T> {
  if (!/^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)*$/.test(id)) throw new Error(`service id "${id}" must be lowercase words joined by dots or dashes`);
  return { id };
}

/**
 * A dependency the plugin can do without: it resolves to null when no plugin provides the
 * service, and when one does, that plugin starts first (e.g. report keys to security if present).
 */
export function optional<T>(ref: ServiceRef<T>): ServiceRef<T | null> {
  return { id: ref.id, optional: true } as ServiceRef<T | null>;
}

export type Deps = Record<string, ServiceRef<any>>;
/** What a deps declaration resolves to: `{db: core.db}` gives `{db: Db}`. */
export type Resolved<D extends Deps> = { [K in keyof D]: D[K] extends ServiceRef<infer T> ? T : never };

/** A service a plugin provides to other plugins (and to its own handlers). */
export interface ServiceProvider<T = unknown> {
  ref: ServiceRef<T>;
  deps: Deps;
  factory(deps: any): T | Promise<T>;
  start?(service: T): Promise<void> | void;
  stop?(service: T): Promise<void> | void;
}

/** Declares how a plugin makes one service: its own deps, a factory, and start/stop. */
export function provide<T, D extends Deps>(
  ref: ServiceRef<T>,
  spec: {
    deps: D;
    factory: (deps: Resolved<D>) => T | Promise<T>;
    start?: (service: T) => Promise<void> | void;
    stop?: (service: T) => Promise<void> | void;
  },
): ServiceProvider<T> {
  return { ref, ...spec };
}

// ---------------------------------------------------------------------------------------
// Routes

export interface HandlerContext<P, Q, B, S> {
  params: P;
  query: Q;
  body: B;
  /** Null only on public routes called without credentials. */
  caller: Caller | null;
  /** Only the services the plugin declared in `deps`. */
  services: S;
  req: Request;
  res: Response;
}

export interface RouteSpec<P, Q, B, R, S> {
  method: Method;
  /** Path below the plugin prefix, with `{name}` parameters as the spec writes them. */
  path: string;
  summary: string;
  description?: string;
  access: Access;
  /** The plan feature a tenant needs for this route (e.g. 'automation'); 403 PLAN_FEATURE without it. */
  feature?: string;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The body as the document describes it, when the handler validates it itself (a signed
   * webhook checks its signature before it says anything about the payload).
   */
  documentedBody?: AnySchema;
  /** How the body arrives: JSON (default) or an HTML form. */
  bodyType?: 'json' | 'form';
  response?: R;
  /** Success status; 200 unless given. */
  status?: number;
  /** Content type of a non-JSON response the handler sends itself with `res`. */
  produces?: string;
  /** Extra statuses this route answers, for the OpenAPI document. */
  errors?: number[];
  /** Unauthenticated calls count against a budget per client address (auth routes). */
  limitByAddress?: boolean;
  handler: (ctx: HandlerContext<Out<P>, Out<Q>, Out<B>, S>) => Promise<In<R> | void> | In<R> | void;
}

/** A declared route. `S` is what its handler needs; a plugin must declare at least that. */
export interface RouteDef<S = any> extends Omit<RouteSpec<AnySchema | undefined, AnySchema | undefined, AnySchema | undefined, AnySchema | undefined, S>, 'handler'> {
  handler: (ctx: HandlerContext<any, any, any, S>) => unknown;
  /** Set by the host: the plugin prefix joined with `path`. */
  fullPath?: string;
  pluginId?: string;
  /** Phantom: makes a route that needs more services than a plugin declares a compile error. */
  readonly __needs?: (s: S) => void;
}

/** Makes routes whose handlers get the services `S`; plugins receive one in `routes(route)`. */
export type RouteMaker<S> = <
  P extends AnySchema | undefined = undefined,
  Q extends AnySchema | undefined = undefined,
  B extends AnySchema | undefined = undefined,
  R extends AnySchema | undefined = undefined,
>(
  spec: RouteSpec<P, Q, B, R, S>,
) => RouteDef<S>;

/** The route maker; typed by the caller (`RouteMaker<S>`), it only returns its argument. */
const route: RouteMaker<any> = (spec) => spec;

// ---------------------------------------------------------------------------------------
// Sockets

/** A WebSocket endpoint; the host authenticates the upgrade (query `token` or bearer header). */
export interface SocketDef<S = any> {
  path: string;
  summary: string;
  access: Access;
  onConnection(ws: WebSocket, ctx: { caller: Caller | null; req: IncomingMessage; services: S }): void;
  fullPath?: string;
  pluginId?: string;
}

// ---------------------------------------------------------------------------------------
// Plugins

export interface PluginSpec<D extends Deps> {
  /** Lowercase words joined by dashes. */
  id: string;
  /** Path prefix of every route, e.g. `/health`; '' when routes span several prefixes. */
  prefix: string;
  /** The services handlers, start and stop get (core's or other plugins'), by local name. */
  deps: D;
  /** Services this plugin makes for others (and itself). */
  provides?: ServiceProvider<any>[];
  /** Plugins that must start first although no service links them (rare). */
  dependsOn?: string[];
  routes: (route: RouteMaker<Resolved<D>>) => RouteDef<Resolved<D>>[];
  sockets?: SocketDef<Resolved<D>>[];
  migrations?: Migration[];
  start?: (deps: Resolved<D>) => Promise<void> | void;
  stop?: (deps: Resolved<D>) => Promise<void> | void;
}

/** A checked plugin definition as the host loads it. */
export interface PluginDef {
  id: string;
  prefix: string;
  deps: Deps;
  provides: ServiceProvider<any>[];
  dependsOn: string[];
  routes: RouteDef[];
  sockets: SocketDef[];
  migrations: Migration[];
  start?(deps: any): Promise<void> | void;
  stop?(deps: any): Promise<void> | void;
}

export function definePlugin<D extends Deps>(spec: PluginSpec<D>): PluginDef {
  return {
    id: spec.id,
    prefix: spec.prefix,
    deps: spec.deps,
    provides: spec.provides ?? [],
    dependsOn: spec.dependsOn ?? [],
    routes: spec.routes(route as RouteMaker<Resolved<D>>),
    sockets: spec.sockets ?? [],
    migrations: spec.migrations ?? [],
    start: spec.start,
    stop: spec.stop,
  };
}
