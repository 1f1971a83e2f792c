import { z } from 'zod';
import { buildOpenApi } from './openapi';
import { definePlugin, type PluginDef } from './plugin';

export const VERSION: string = (require('../../package.json') as { version: string }).version;

/** Core's own routes: the OpenAPI document of everything the host serves. */
export function metaPlugin(all: () => PluginDef[]): PluginDef {
  let cached: unknown;
  return definePlugin({
    id: 'core',
    prefix: '',
    deps: {},
    routes: (route) => [
      route({
        method: 'get',
        path: '/openapi.json',
        summary: 'OpenAPI 3.1 document of the running service',
        access: 'public',
        response: z.record(z.string(), z.unknown()),
        handler: () => {
          cached ??= buildOpenApi(
            all().flatMap((p) => p.routes),
            all().flatMap((p) => p.sockets ?? []),
            VERSION,
          );
          return cached as Record<string, unknown>;
        },
      }),
    ],
  });
}
