// Chaos figures: how fast an abort removes every injection, and the experiment history read.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../core/config';
import { Host } from '../../core/host';
import chaosPlugin from '../../plugins/chaos';
import { chaosEngineRef } from '../../plugins/chaos/engine/service';
import kernelsPlugin from '../../plugins/kernels';
import { drive, type Row } from './harness';
import type { Scenario } from './scenarios';
import { bootstrapAdmin } from '../../plugins/auth/store';

const caller = { id: 'bench', tenantId: 'platform' };

export const chaosScenario: Scenario = {
  name: 'chaos: abort latency and experiment history',
  async run(): Promise<Row[]> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-chaos-'));
    const config = loadConfig({}, {
      server: { port: 0, host: '127.0.0.1' },
      dataDir,
      log: { level: 'warn' },
      auth: { adminPassword: 'bench-admin-password' },
      plans: { enterprise: { requestsPerMinute: 100_000_000 } },
      mesh: { only: ['analytics'], nodesPerKernel: 2, threadsPerNode: 1 },
      chaos: { probes: { count: 5, concurrency: 1, intervalMs: 20 }, recoveryTimeoutSeconds: 5 },
    });
    const host = new Host({ config, plugins: [kernelsPlugin, chaosPlugin] });
    await host.start();
    try {
      const chaos = host.service(chaosEngineRef);
      const def = { scenario_id: null, scenario_name: 'bench', kind: 'scenario' as const, injection_type: 'latency' as const, target_domains: ['analytics'], parameters: { latency_ms: 20, node_share: 1 }, duration_seconds: 60, hypothesis: { description: 'bench', min_success_ratio: 0.5, max_latency_p99_ms: 5000 } };
      const aborts: number[] = [];
      for (let i = 0; i < 20; i++) {
        const e = await chaos.run(def, caller);
        while ((await chaos.get('platform', e.experiment_id)).injected_at === null) await new Promise((r) => setTimeout(r, 5));
        const t0 = performance.now();
        await chaos.abort(e.experiment_id, caller);
        aborts.push(performance.now() - t0);
        if (host.services.mesh.nodes().some((n) => n.control)) throw new Error('an injection outlived its abort');
      }
      aborts.sort((a, b) => a - b);
      const at = (p: number) => aborts[Math.min(aborts.length - 1, Math.floor((p / 100) * aborts.length))];
      // Hosts without the auth plugin have no first admin: the bench makes it as the tests do.
      await bootstrapAdmin(host.services.db, config);
      const admin = await host.services.db('users').first();
      const token = host.services.auth.sign({ id: admin.id, tenantId: admin.tenant_id, role: 'admin' }).token;
      const history = await drive({ url: `http://127.0.0.1:${host.port}/ops/resilience/experiments?limit=20`, headers: { authorization: `Bearer ${token}` } });
      return [
        { name: 'chaos: abort a running latency experiment (2 nodes)', figures: { rps: 0, p50: at(50), p99: at(99), non2xx: 0, errors: 0 }, note: 'ms from the abort call until every injection is removed and the record is aborted' },
        { name: 'GET /ops/resilience/experiments?limit=20 (20 in history)', figures: history },
      ];
    } finally {
      await host.stop();
    }
  },
};
