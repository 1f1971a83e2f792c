// The floor under the health_update fan-out: the same number of clients as plain TCP
// sockets, one write each per event (servers/tcp-fanout.ts), timed as the WebSocket clients
// are. What the machine gives a fan-out before any WebSocket or hub code runs.
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { freePort, ROOT, type Figures, type Row } from './harness';

export async function tcpFanOutFloor(clients: number, events: number, summary: (latencies: number[], seconds: number, failed: number) => Figures): Promise<Row> {
  const port = await freePort();
  const proc = spawn(process.execPath, [path.join(ROOT, 'dist', 'test', 'bench', 'servers', 'tcp-fanout.js')], { env: { ...process.env, PORT: String(port) }, stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += String(d)));
  const sockets: net.Socket[] = [];
  // Arrival time and line; parsed after each event, as the WebSocket clients' are.
  let arrivals: Array<{ at: number; line: string }> = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`tcp fan-out server did not start: ${out}`)), 30_000);
      proc.stdout.on('data', () => out.includes('ready') && (clearTimeout(timer), resolve()));
    });
    while (sockets.length < clients) {
      const batch = Math.min(100, clients - sockets.length);
      await Promise.all(Array.from({ length: batch }, () => new Promise<void>((resolve, reject) => {
        const s = net.connect(port, '127.0.0.1', () => resolve());
        s.once('error', reject);
        let partial = '';
        s.on('data', (data) => {
          const at = performance.timeOrigin + performance.now();
          const lines = (partial + data.toString('utf8')).split('\n');
          partial = lines.pop()!;
          for (const line of lines) arrivals.push({ at, line });
        });
        sockets.push(s);
      })));
    }
    const latencies: number[] = [];
    const loops: number[] = [];
    let failed = 0;
    const t0 = performance.now();
    for (let i = 0; i < events; i++) {
      arrivals = [];
      const from = out.length;
      proc.stdin.write('fire\n');
      const end = Date.now() + 5000;
      while (arrivals.length < clients && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
      failed += clients - arrivals.length;
      for (const a of arrivals) latencies.push(a.at - (JSON.parse(a.line) as { data: { sent_at: number } }).data.sent_at);
      const m = /fired (\S+)/.exec(out.slice(from));
      if (m) loops.push(Number(m[1]));
      await new Promise((r) => setTimeout(r, 50));
    }
    loops.sort((a, b) => a - b);
    return {
      name: `the same to ${clients} plain TCP sockets (floor, no WebSocket)`,
      figures: summary(latencies, (performance.now() - t0) / 1000, failed),
      note: `delivered ${latencies.length}/${events * clients}; server write loop p50 ${loops[loops.length >> 1]?.toFixed(1)} ms`,
    };
  } finally {
    for (const s of sockets) s.destroy();
    proc.kill('SIGTERM');
  }
}
