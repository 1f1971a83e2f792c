import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { SocketDef } from '../plugin';
import { callerOf } from '../auth/service';
import { roleAtLeast, type Caller } from '../roles';
import type { Services } from '../services';

function refuse(socket: Duplex, status: number, text: string): void {
  const body = JSON.stringify({ detail: text, code: text.toUpperCase().replace(/ /g, '_') });
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function normalise(pathname: string): string {
  let p = pathname.startsWith('/api/') ? pathname.slice(4) : pathname;
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  return p;
}

function tokenOf(req: IncomingMessage, url: URL): string | null {
  const q = url.searchParams.get('token');
  if (q) return q;
  const h = req.headers.authorization;
  const m = h ? /^bearer\s+(\S+)$/i.exec(h) : null;
  return m ? m[1] : null;
}

/** Routes WebSocket upgrades to the declared socket endpoints, authenticating each. */
export function attachSockets(server: Server, sockets: SocketDef[], services: Services, depsOf: (pluginId: string | undefined) => object): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const byPath = new Map(sockets.map((s) => [normalise(s.fullPath ?? s.path), s]));
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const def = byPath.get(normalise(url.pathname));
      if (!def) return refuse(socket, 404, 'Not Found');
      let caller: Caller | null = null;
      if (def.access !== 'public') {
        const token = tokenOf(req, url);
        if (!token) return refuse(socket, 401, 'Unauthorized');
        const result = await services.auth.verify(token);
        if (!result.valid) return refuse(socket, 401, 'Unauthorized');
        caller = callerOf(result.claims);
        if (def.access !== 'authenticated' && !roleAtLeast(caller.role, def.access)) return refuse(socket, 403, 'Forbidden');
      }
      wss.handleUpgrade(req, socket, head, (ws) => def.onConnection(ws, { caller, req, services: depsOf(def.pluginId) }));
    })().catch(() => refuse(socket, 500, 'Internal Server Error'));
  });
  return wss;
}
