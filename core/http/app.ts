import crypto from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Request, type Response } from 'express';
import { safeUrl } from '../logger';
import type { RouteDef } from '../plugin';
import type { Services } from '../services';
import { errorHandler, routeHandler, sendJson, type Pipeline } from './pipeline';
import { plainJson, readJson } from './body';
import { decodeParams, RouteTable } from './routes';
import { BadRequest } from '../errors';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Keeps a sane client request id, or makes one; logs one line per request. */
function requestContext(services: Services, pipeline: Pipeline) {
  // Decided once: building the log record of every request costs when nobody reads it.
  const logRequests = services.log.isLevelEnabled('info');
  const observers = pipeline.observers;
  return (req: Request, res: Response) => {
    const start = performance.now();
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : crypto.randomUUID();
    res.setHeader('X-Request-Id', id);
    // While shutting down, no connection is kept for another request.
    if (services.lifecycle.state === 'stopping') res.setHeader('Connection', 'close');
    if (!logRequests && observers.length === 0) return;
    res.on('finish', () => {
      const durationMs = performance.now() - start;
      const route = (res.locals.route as string | undefined) ?? null;
      if (logRequests) {
        services.log.info(
          { reqId: id, method: req.method, url: safeUrl(req.originalUrl), route, status: res.statusCode, ms: Math.round(durationMs * 100) / 100 },
          'request',
        );
      }
      for (const observe of observers) observe({ method: req.method, route, status: res.statusCode, durationMs });
    });
  };
}

/** The request path without its query string. */
function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** The request listener, with the request and response classes the server should make. */
export interface AppListener {
  (req: IncomingMessage, res: ServerResponse): void;
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
  /** Route lookups remembered by the route table (a bounded cache). */
  routeCache: () => number;
}

/**
 * The request listener of the HTTP server. Express supplies the request and response
 * objects handlers know (req.query, req.ip, res.status, ...) and the body parsers; route
 * lookup is ours (core/http/routes.ts), and a request passes no Express middleware layers:
 * its router, with a layer per route, was the costliest part of a cheap request.
 *
 * Express gives node's request and response objects its prototypes on every request
 * (Object.setPrototypeOf), which changes their hidden class and slows every later property
 * access on them. The returned listener carries classes whose prototypes are Express's:
 * a server made with them (createServer's IncomingMessage / ServerResponse options) gets
 * objects that are Express's from the start.
 */
export function buildApp(services: Services, pipeline: Pipeline, routes: RouteDef[], depsOf: (pluginId: string | undefined) => object): AppListener {
  const app = express();
  class ApiRequest extends IncomingMessage {}
  class ApiResponse<R extends IncomingMessage = IncomingMessage> extends ServerResponse<R> {}
  Object.setPrototypeOf(ApiRequest.prototype, app.request);
  Object.setPrototypeOf(ApiResponse.prototype, app.response);
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', 'loopback');
  const context = requestContext(services, pipeline);
  const limit = services.config.server.bodyLimit;
  const json = express.json({ limit, type: ['application/json', 'application/*+json'] });
  const form = express.urlencoded({ limit, extended: false, parameterLimit: 100 });
  const table = new RouteTable(routes);
  const handlers = new Map(
    routes.map((r) => {
      const handle = routeHandler(r, services, pipeline, depsOf(r.pluginId));
      return [r, (req: Request, res: Response, fail: (err: unknown) => void) => pipeline.track(handle(req, res, fail))] as const;
    }),
  );
  const onError = errorHandler(services);

  const dispatch = (req: Request, res: Response) => {
    const fail = (err: unknown) => onError(err, req, res);
    context(req, res);
    const found = table.find(req.method, pathOf(req.url));
    if (found.kind === 'none') {
      sendJson(res, 404, { detail: `Not Found: ${req.method} ${safeUrl(pathOf(req.originalUrl))}`, code: 'ROUTE_NOT_FOUND' });
      return;
    }
    if (found.kind === 'method') {
      res.setHeader('Allow', found.allowed.join(', '));
      if (req.method === 'OPTIONS') {
        res.statusCode = 204;
        res.end();
        return;
      }
      sendJson(res, 405, { detail: `Method Not Allowed: ${req.method} ${safeUrl(pathOf(req.originalUrl))}; allowed: ${found.allowed.join(', ')}`, code: 'METHOD_NOT_ALLOWED' });
      return;
    }
    const { route, params } = found.match;
    res.locals.route = route.fullPath;
    const decoded = decodeParams(params);
    if (!decoded) return fail(new BadRequest('Malformed percent-encoding in the path'));
    req.params = decoded;
    const handle = handlers.get(route)!;
    // Bodies are read only when one was sent (the parsers would look at the headers anyway).
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return handle(req, res, fail);
    if (plainJson(req)) return readJson(req, limit, (err?: unknown) => (err ? fail(err) : handle(req, res, fail)));
    json(req, res, (err?: unknown) => {
      if (err) return fail(err);
      form(req, res, (err2?: unknown) => (err2 ? fail(err2) : handle(req, res, fail)));
    });
  };

  const listener = (incoming: IncomingMessage, outgoing: ServerResponse) => {
    // What express's app.handle does before its router runs.
    const req = incoming as Request;
    const res = outgoing as Response;
    req.res = res;
    res.req = req;
    // A server not made with the classes above (see AppListener) still works, more slowly.
    if (!(incoming instanceof ApiRequest)) Object.setPrototypeOf(req, app.request);
    if (!(outgoing instanceof ApiResponse)) Object.setPrototypeOf(res, app.response);
    res.locals = Object.create(null) as Record<string, unknown>;
    req.originalUrl = req.url;
    try {
      dispatch(req, res);
    } catch (err) {
      onError(err, req, res);
    }
  };
  return Object.assign(listener, { IncomingMessage: ApiRequest, ServerResponse: ApiResponse as typeof ServerResponse, routeCache: () => table.remembered });
}
