import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { NotFound, Unavailable } from '../../core/errors';
import { definePlugin } from '../../core/plugin';

// The web console (docs/console.md): static files that `make build` bundles from ui/ with
// esbuild into dist/plugins/console/assets/, served here as declared routes, so they pass
// the same pipeline (request ids, logging, metrics, the /api alias) as every other route.
// The files are public, like any login page: every figure they show comes from API calls
// that carry the operator's token.

/** Where the build writes the bundle: beside this file once compiled. */
export const ASSETS = path.join(__dirname, 'assets');

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  map: 'application/json; charset=utf-8',
  svg: 'image/svg+xml',
};

// Scripts and styles only from this origin; the stream is a WebSocket to the same host.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ws: wss:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const assetName = z.object({ asset: z.string().regex(/^[a-z0-9-]{1,64}\.(?:js|css|svg)(?:\.map)?$/, 'a file name of the console bundle') });

async function send(res: import('express').Response, name: string): Promise<void> {
  let body: Buffer;
  try {
    body = await fs.readFile(path.join(ASSETS, name));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (name === 'index.html') throw new Unavailable('The console is not built: run `make build`', undefined, 'CONSOLE_NOT_BUILT');
    throw new NotFound(`No console file ${name}`, 'CONSOLE_FILE_NOT_FOUND');
  }
  res.status(200);
  res.setHeader('Content-Type', TYPES[name.slice(name.lastIndexOf('.') + 1)]);
  res.setHeader('Content-Length', body.length);
  // The bundle changes with every build and is small: always revalidate.
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  if (name.endsWith('.html')) {
    res.setHeader('Content-Security-Policy', CSP);
    res.setHeader('X-Frame-Options', 'DENY');
  }
  res.end(body);
}

export default definePlugin({
  id: 'console',
  prefix: '/console',
  deps: {},
  routes: (route) => [
    route({
      method: 'get',
      path: '/',
      summary: 'The web console (a single page; its views are addressed by the URL fragment)',
      access: 'public',
      produces: 'text/html',
      errors: [503],
      handler: ({ res }) => send(res, 'index.html'),
    }),
    route({
      method: 'get',
      path: '/{asset}',
      summary: "A file of the console's bundle (script, style sheet, source map)",
      access: 'public',
      params: assetName,
      produces: 'text/javascript',
      errors: [404, 422],
      handler: ({ params, res }) => send(res, params.asset),
    }),
  ],
});
