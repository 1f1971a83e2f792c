import createFetchClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './schema';

export type { components, operations, paths };
export * from './stream';

/** An error body of the API: `detail` and a stable UPPER_SNAKE `code`. */
export type ApiError = components['schemas']['Error'];

export interface ClientOptions {
  /** The service's base URL, e.g. http://127.0.0.1:8000 (a path prefix such as /api is kept). */
  baseUrl: string;
  /** A bearer token (the API JWT); null or absent for public operations only. */
  token?: string | null;
  /** Another fetch (tests, proxies); the global one by default. */
  fetch?: typeof globalThis.fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

export type PlatformClient = Client<paths>;

/**
 * A typed client of every operation in the OpenAPI document: `client.GET('/mesh/nodes')`,
 * `client.POST('/mesh/nodes/{node_id}/drain', { params: { path: { node_id } }, body })`.
 * Each call resolves to `{ data, error, response }`: `data` typed by the operation's success
 * schema, `error` by its error schema; it never throws for an HTTP status.
 */
export function createClient(opts: ClientOptions): PlatformClient {
  const client = createFetchClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    headers: opts.headers,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  if (opts.token) client.use(bearer(opts.token));
  return client;
}

/** Adds `Authorization: Bearer <token>` to each request (for a client made another way). */
export function bearer(token: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
  };
}
