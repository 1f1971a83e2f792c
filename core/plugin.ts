import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import type { WebSocket } from 'ws';
import { z } from 'zod';
import type { Migration } from './db';
import type { Access, Caller } from './roles';
import type { Services, ServiceName } from './services';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

type AnySchema = z.ZodType;
type Out<S> = S extends z.ZodType ? z.output<S> : Record<string, never>;
type In<S> = S extends z.ZodType ? z.input<S> : unknown;

export interface HandlerContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Null only on public routes called without credentials. */
  caller: Caller | null;
  services: Services;
  req: Request;
  res: Response;
}

export interface RouteSpec<P, Q, B, R> {
  method: Method;
  /** Path below the plugin prefix, with `{name}` parameters as the spec writes them. */
  path: string;
  summary: string;
  description?: string;
  access: Access;
  params?: P;
  query?: Q;
  body?: B;
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
  handler(ctx: HandlerContext<Out<P>, Out<Q>, Out<B>>): Promise<In<R> | void> | In<R> | void;
}

export interface RouteDef extends RouteSpec<AnySchema | undefined, AnySchema | undefined, AnySchema | undefined, AnySchema | undefined> {
  /** Set by the host: the plugin prefix joined with `path`. */
  fullPath?: string;
  pluginId?: string;
}

/** Declares a route; the generics give the handler typed, validated input. */
export function route<
  P extends AnySchema | undefined = undefined,
  Q extends AnySchema | undefined = undefined,
  B extends AnySchema | undefined = undefined,
  R extends AnySchema | undefined = undefined,
>(spec: RouteSpec<P, Q, B, R>): RouteDef {
  return spec as unknown as RouteDef;
}

/** A WebSocket endpoint; the host authenticates the upgrade (query `token` or bearer header). */
export interface SocketDef {
  path: string;
  summary: string;
  access: Access;
  onConnection(ws: WebSocket, ctx: { caller: Caller | null; req: IncomingMessage; services: Services }): void;
  fullPath?: string;
}

export interface PluginDef {
  /** Lowercase words joined by dashes. */
  id: string;
  /** Path prefix of every route, e.g. `/health`; '' when routes span several prefixes. */
  prefix: string;
  /** Core services the plugin uses; the host refuses to boot if one does not exist. */
  services: ServiceName[];
  /** Plugins that must start first. */
  dependsOn?: string[];
  routes: RouteDef[];
  sockets?: SocketDef[];
  migrations?: Migration[];
  start?(services: Services): Promise<void> | void;
  stop?(services: Services): Promise<void> | void;
}

export function definePlugin(def: PluginDef): PluginDef {
  return def;
}
