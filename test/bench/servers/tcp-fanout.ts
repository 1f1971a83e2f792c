// Bench server: the floor under the stream fan-out. Plain TCP sockets, no WebSocket, no hub:
// on stdin "fire" it writes one health_update-sized JSON line to every socket, as the
// hub writes one frame to each, and prints how long that loop took.
import net from 'node:net';
import readline from 'node:readline';

const sockets = new Set<net.Socket>();
const server = net.createServer((s) => {
  s.setNoDelay(true);
  sockets.add(s);
  s.on('error', () => s.destroy());
  s.on('close', () => sockets.delete(s));
});
let seq = 0;
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'fire') {
    const t0 = performance.now();
    const data = { kernel_id: 'analytics', node_id: 'analytics-1', domain: 'analytics', health: 'healthy', previous: 'degraded', reason: 'bench', seq: seq++, sent_at: performance.timeOrigin + t0 };
    const message = Buffer.from(`${JSON.stringify({ type: 'health_update', data })}\n`);
    for (const s of sockets) s.write(message);
    process.stdout.write(`fired ${(performance.now() - t0).toFixed(3)}\n`);
  } else if (line === 'clients') {
    process.stdout.write(`clients ${sockets.size}\n`);
  }
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
