import type { Request, Response } from 'express';
import { codeOf, Forbidden, HttpError, Unauthorized, Unprocessable, type ValidationIssue } from '../errors';
import type { RouteDef } from '../plugin';
import { roleAtLeast, type Caller } from '../roles';
import type { Services } from '../services';
import { nulIssues, parsePart } from './validation';

/** Runs after authentication and before validation (rate limits live here). */
export type BeforeHook = (req: Request, res: Response, route: RouteDef, caller: Caller | null) => Promise<void> | void;

/** Hooks that other areas of core add to every route. */
export class Pipeline {
  readonly before: BeforeHook[] = [];
  /** Called once per finished request (metrics). */
  readonly observers: Array<(record: RequestRecord) => void> = [];
  /** Handlers still running; a stopping host waits for them before closing the database. */
  private readonly running = new Set<Promise<void>>();

  track(work: Promise<void>): void {
    this.running.add(work);
    void work.finally(() => this.running.delete(work));
  }

  /** Resolves when every running handler has finished, or after `ms`; false on timeout. */
  async settled(ms: number): Promise<boolean> {
    if (this.running.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const done = Promise.allSettled([...this.running]).then(() => this.settled(ms));
    return Promise.race([done, late]).finally(() => clearTimeout(timer));
  }
}

/**
 * Writes a JSON answer. Express's res.json also checks freshness, content negotiation and
 * ETag settings, none of which apply to this API, and costs several times more.
 */
export function sendJson(res: Response, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

async function resolveCaller(route: RouteDef, req: Request, services: Services): Promise<Caller | null> {
  if (route.access === 'public') {
    // Credentials are optional here; bad ones are ignored rather than refused.
    if (!req.headers.authorization) return null;
    return services.auth.authenticate(req).catch(() => null);
  }
  const caller = await services.auth.authenticate(req);
  if (!caller) throw new Unauthorized();
  return caller;
}

/** The express handler for one declared route. */
export function routeHandler(route: RouteDef, services: Services, pipeline: Pipeline, deps: object) {
  const validateResponses = services.config.server.validateResponses;
  return async (req: Request, res: Response, next: (err: unknown) => void) => {
    let caller: Caller | null = null;
    try {
      caller = await resolveCaller(route, req, services);
      if (caller && route.access !== 'public' && route.access !== 'authenticated' && !roleAtLeast(caller.role, route.access)) {
        throw new Forbidden(`This action needs the ${route.access} role or higher`);
      }
      for (const hook of pipeline.before) {
        const pending = hook(req, res, route, caller);
        if (pending) await pending;
      }
      const issues: ValidationIssue[] = [];
      nulIssues(req as Request & { rawBody?: string }, issues);
      if (issues.length) throw new Unprocessable(issues);
      const params = parsePart(route.params, req.params, 'path', issues);
      // Express parses the query string at every read of req.query; a route that declares
      // no query has nothing to validate, so it is parsed only if the handler reads it.
      let queryRead = route.query !== undefined;
      let query = queryRead ? parsePart(route.query, { ...(req.query as object) }, 'query', issues) : undefined;
      const body = parsePart(route.body, req.body === undefined ? {} : req.body, 'body', issues);
      if (issues.length) throw new Unprocessable(issues);
      const result = await route.handler({
        params: params as never,
        get query() {
          if (!queryRead) {
            queryRead = true;
            query = { ...(req.query as object) };
          }
          return query as never;
        },
        set query(value: never) {
          queryRead = true;
          query = value;
        },
        body: body as never,
        caller,
        services: deps,
        req,
        res,
      });
      if (res.headersSent) return;
      if (validateResponses && route.response) {
        const check = route.response.safeParse(result);
        if (!check.success) {
          throw new Error(`response of ${route.method.toUpperCase()} ${route.fullPath} does not match its schema: ${check.error.message}`);
        }
      }
      sendJson(res, route.status ?? 200, result ?? null);
    } catch (err) {
      if (err instanceof HttpError && (err.status === 401 || err.status === 403 || err.status === 404)) publishRefusal(services, route, req, caller, err);
      next(err);
    }
  };
}

/**
 * Refusals the security plugin records: a refused token (401 on a route that needs one,
 * with credentials given), a call above the caller's role or plan (403), and a lookup of an
 * object that is not the caller's (404 on a route with a path parameter). Only refusals
 * pay for this; 429s are reported by the rate limiter, once per tenant and window.
 */
function publishRefusal(services: Services, route: RouteDef, req: Request, caller: Caller | null, err: HttpError): void {
  const base = { method: route.method.toUpperCase(), route: route.fullPath ?? route.path, address: req.ip ?? null };
  if (err.status === 401) {
    if (route.access !== 'public' && req.headers.authorization) services.events.publish('security.token_refused', { tenant_id: null, ...base, path: req.path, reason: typeof err.detail === 'string' ? err.detail : 'refused' });
  } else if (caller && (err.status === 403 || route.path.includes('{'))) {
    services.events.publish(err.status === 403 ? 'security.forbidden' : 'security.not_found', { tenant_id: caller.tenantId, user_id: caller.id, role: caller.role, path: req.path, ...base });
  }
}

/** A unique-constraint violation from SQLite or PostgreSQL (23505). */
function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  return Boolean(e && ((e.code === 'SQLITE_CONSTRAINT' && /UNIQUE constraint failed|PRIMARY KEY/.test(e.message ?? '')) || e.code === '23505'));
}

/**
 * A PostgreSQL data exception (SQLSTATE class 22): a value the request carried that the
 * column cannot hold, such as an integer past its type's range or a date past year 294276.
 * SQLite stores such values as they come, so only PostgreSQL refuses them.
 */
function isDataException(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length === 5 && code.startsWith('22');
}

/** Turns any error into a `{detail}` response; never a stack trace. */
export function errorHandler(services: Services) {
  return (err: unknown, req: Request, res: Response) => {
    const e = err as { type?: string; status?: number; statusCode?: number; message?: string };
    let status = 500;
    let detail: unknown = 'Internal Server Error';
    let headers: Record<string, string> = {};
    let body: Record<string, unknown> | null = null;
    if (err instanceof HttpError) {
      status = err.status;
      detail = err.detail;
      headers = err.headers;
      body = err.body();
    } else if (isUniqueViolation(err)) {
      // Two writes raced for one key (a version, a name): the loser conflicts with what the
      // winner wrote, and may retry. Logged, since a handler should have said so itself.
      status = 409;
      detail = 'A concurrent change to the same resource won; read it again and retry';
      body = { detail, code: 'CONCURRENT_WRITE' };
      services.log.warn({ err, reqId: res.getHeader('X-Request-Id') }, 'unique constraint violated by a concurrent write');
    } else if (isDataException(err)) {
      // The statement failed, so it wrote nothing; logged, since the route's schema should
      // have bounded the value. The database names no field, and knex puts the SQL before
      // the database's own words: only those are shown.
      status = 422;
      detail = [{ loc: [req.method === 'GET' || req.method === 'HEAD' ? 'query' : 'body'], msg: `cannot be stored: ${(e.message ?? 'out of range').split(' - ').pop()}`, type: 'value_error.not_storable' }];
      body = { detail, code: 'VALUE_NOT_STORABLE' };
      services.log.warn({ err, reqId: res.getHeader('X-Request-Id') }, 'a value the database cannot store reached it');
    } else if (e?.type === 'entity.parse.failed') {
      status = 400;
      detail = 'Malformed JSON in request body';
    } else if (e?.type === 'entity.too.large') {
      status = 413;
      detail = `Request body exceeds the limit of ${services.config.server.bodyLimit} bytes`;
    } else if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
      status = 415;
      detail = e.message ?? 'Unsupported content encoding';
    } else if (typeof (e?.status ?? e?.statusCode) === 'number' && (e.status ?? e.statusCode)! < 500) {
      status = (e.status ?? e.statusCode)!;
      detail = e.message ?? 'Bad request';
    }
    // A client that closed its connection cancels its task (503): nobody reads that answer,
    // and it is the client's choice, not a fault of the service.
    if (status >= 500 && res.destroyed) services.log.info({ reqId: res.getHeader('X-Request-Id'), status, detail }, 'client closed the connection before the answer');
    else if (status >= 500) services.log.error({ err, reqId: res.getHeader('X-Request-Id') }, 'request failed');
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    sendJson(res, status, body ?? { detail, code: codeOf(status) });
  };
}

export interface RequestRecord {
  method: string;
  /** The declared path template, or null when no route matched. */
  route: string | null;
  status: number;
  durationMs: number;
}
