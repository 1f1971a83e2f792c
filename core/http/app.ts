import crypto from 'node:crypto';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { safeUrl } from '../logger';
import type { RouteDef } from '../plugin';
import type { Services } from '../services';
import { errorHandler, expressPath, routeHandler, type Pipeline } from './pipeline';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Keeps a sane client request id, or makes one; logs one line per request. */
function requestContext(services: Services, pipeline: Pipeline) {
  return (req: Request, res: Response, next: NextFunction) => {
    const start = process.hrtime.bigint();
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : crypto.randomUUID();
    res.setHeader('X-Request-Id', id);
    // While shutting down, no connection is kept for another request.
    if (services.lifecycle.state === 'stopping') res.setHeader('Connection', 'close');
    res.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - start) / 1e6;
      const route = (res.locals.route as string | undefined) ?? null;
      services.log.info(
        { reqId: id, method: req.method, url: safeUrl(req.originalUrl), route, status: res.statusCode, ms: Math.round(durationMs * 100) / 100 },
        'request',
      );
      for (const observe of pipeline.observers) observe({ method: req.method, route, status: res.statusCode, durationMs });
    });
    next();
  };
}

export function buildApp(services: Services, pipeline: Pipeline, routes: RouteDef[]): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', 'loopback');
  app.use(requestContext(services, pipeline));
  const limit = services.config.server.bodyLimit;
  app.use(express.json({ limit, type: ['application/json', 'application/*+json'] }));
  app.use(express.urlencoded({ limit, extended: false, parameterLimit: 100 }));

  const router = express.Router({ strict: false });
  for (const route of routes) {
    const path = route.fullPath!;
    router[route.method](expressPath(path), (req: Request, res: Response, next: NextFunction) => {
      res.locals.route = path;
      next();
    }, routeHandler(route, services, pipeline));
  }
  // Every route is served as written and under /api.
  app.use('/api', router);
  app.use(router);
  app.use((req: Request, res: Response) => {
    res.status(404).json({ detail: `Not Found: ${req.method} ${safeUrl(req.path)}` });
  });
  app.use(errorHandler(services));
  return app;
}
