import type { Request } from 'express';

/**
 * The base URL of this host as the request reached it, on the loopback interface: plugins
 * that exercise the running API through real HTTP (stress tests, the isolation attack, the
 * interop export of /openapi.json) call it rather than reaching into the host's internals.
 */
export function selfUrl(req: Request): string {
  const port = req.socket.localPort;
  return `http://127.0.0.1:${port}`;
}

export interface LoopbackReply {
  status: number;
  body: unknown;
}

/** One JSON request to this host; the answer's body parsed when it is JSON. */
export async function callSelf(base: string, method: string, path: string, o: { token?: string | null; body?: unknown; signal?: AbortSignal } = {}): Promise<LoopbackReply> {
  const headers: Record<string, string> = {};
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, { method: method.toUpperCase(), headers, body: o.body === undefined ? undefined : JSON.stringify(o.body), signal: o.signal });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: keep the text */
  }
  return { status: res.status, body };
}

/** The bearer token a request came with, to call this host on the caller's behalf. */
export function bearerOf(req: Request): string | null {
  const h = req.headers.authorization;
  return h && /^bearer /i.test(h) ? h.slice(7).trim() : null;
}
