// Bench server: a host with the live stream; on stdin "fire" it publishes a health_update
// carrying its send time (performance.timeOrigin + now, comparable across processes).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { loadConfig } from '../../../core/config';
import { Host } from '../../../core/host';
import opsMesh from '../../../plugins/ops-mesh';
import { bootstrapAdmin } from '../../../plugins/auth/store';

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-hub-'));
  const config = loadConfig({}, { server: { port: Number(process.env.PORT), host: '127.0.0.1' }, dataDir, log: { level: 'warn' }, auth: { adminPassword: 'bench-admin-password' }, mesh: { only: ['analytics'], nodesPerKernel: 1, threadsPerNode: 1 } });
  const host = new Host({ config, plugins: [opsMesh] });
  await host.start();
  // Hosts without the auth plugin have no first admin: the bench makes it as the tests do.
  await bootstrapAdmin(host.services.db, config);
  const admin = await host.services.db('users').first();
  const token = host.services.auth.sign({ id: admin.id, tenantId: admin.tenant_id, role: 'admin' }).token;
  process.stdout.write(`ready ${token}\n`);
  const rl = readline.createInterface({ input: process.stdin });
  let n = 0;
  rl.on('line', (line) => {
    if (line === 'fire') {
      const t0 = performance.now();
      host.services.events.publish('health_update', { kernel_id: 'analytics', node_id: 'analytics-1', domain: 'analytics', health: n % 2 ? 'healthy' : 'degraded', previous: n % 2 ? 'degraded' : 'healthy', reason: 'bench', seq: n++, sent_at: performance.timeOrigin + t0 });
      // The server's own part: the synchronous loop that hands the frame to every socket.
      process.stdout.write(`fired ${(performance.now() - t0).toFixed(3)}\n`);
    } else if (line === 'memory') {
      // After a full collection (the bench starts this server with --expose-gc) when possible.
      (globalThis as { gc?: () => void }).gc?.();
      const m = process.memoryUsage();
      process.stdout.write(`memory ${host.services.hub.clients.size} ${m.rss} ${m.heapUsed + m.external + m.arrayBuffers}\n`);
    } else if (line === 'clients') {
      process.stdout.write(`clients ${host.services.hub.clients.size}\n`);
    }
  });
  process.on('SIGTERM', () => void host.stop().then(() => process.exit(0)));
}

void main();
