import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { startHost } from '../helpers/host';
import chaosPlugin from '../../plugins/chaos';
import { FAST_CHAOS, startChaosHost } from './chaos-helpers';
import { MESH_PLUGINS, until } from '../core/mesh-helpers';

const MAIN = path.resolve(__dirname, '..', '..', 'core', 'main.js');
const PASSWORD = 'a-restart-test-password';

// No injection outlives its experiment: a graceful stop rolls back, and a process killed
// mid-run leaves a claim that the next start takes over.
describe('chaos across host restarts', () => {
  it('a graceful stop aborts the running experiment and rolls its injections back', async () => {
    const t = await startChaosHost('sqlite');
    const dataDir = t.dataDir;
    let id: string;
    try {
      const s = await t.request('POST', '/ops/resilience/scenarios', { body: { name: 'long', injection_type: 'error', target_domains: ['probe'], parameters: { error_rate: 0.3 }, duration_seconds: 60, hypothesis: { min_success_ratio: 0, max_latency_p99_ms: 5000 } } });
      id = (await t.request('POST', `/ops/resilience/scenarios/${s.body.scenario_id}/run`)).body.experiment_id;
      await until(async () => (await t.request('GET', `/ops/resilience/experiments/${id}`)).body.injected_at, 5000, 'injected');
      expect(t.host.services.mesh.nodes().some((n) => n.control)).to.equal(true);
    } finally {
      await t.stop();
    }
    const again = await startHost({ dataDir, plugins: [...MESH_PLUGINS, chaosPlugin], config: { mesh: { only: ['analytics'] }, chaos: FAST_CHAOS } });
    try {
      const e = (await again.request('GET', `/ops/resilience/experiments/${id}`)).body;
      expect(e).to.include({ status: 'aborted', reason: 'the host is stopping', aborted_by: 'chaos' });
      expect(e.injections.length).to.be.at.least(1);
      expect(e.injections.every((i: any) => i.rolled_back_at && i.rollback_note === null)).to.equal(true);
    } finally {
      await again.stop();
    }
  });

  it('a process killed mid-run: the next start marks the experiment failed and rolls its injections back', async function () {
    this.timeout(40_000);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-chaos-'));
    const configFile = path.join(dataDir, 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ mesh: { only: ['analytics'], nodesPerKernel: 1, threadsPerNode: 1, heartbeatMs: 200 }, chaos: { ...FAST_CHAOS, seedBuiltins: false } }));
    const proc = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', CONFIG_FILE: configFile, ADMIN_PASSWORD: PASSWORD }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (d) => (out += String(d)));
    proc.stderr.on('data', (d) => (out += String(d)));
    const exited = new Promise((resolve) => proc.on('exit', resolve));
    let id = '';
    try {
      await until(() => /listening on http:\/\/127\.0\.0\.1:(\d+)/.test(out), 15_000, 'the child host to listen');
      const base = `http://127.0.0.1:${/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1]}`;
      const call = async (method: string, p: string, body?: unknown, token?: string) => {
        const r = await fetch(base + p, { method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
        return { status: r.status, body: (await r.json()) as any };
      };
      const token = (await call('POST', '/auth/login', { email: 'admin@example.com', password: PASSWORD })).body.access_token as string;
      const s = await call('POST', '/ops/resilience/scenarios', { name: 'killed', injection_type: 'latency', target_domains: ['analytics'], parameters: { latency_ms: 20 }, duration_seconds: 60, hypothesis: { max_latency_p99_ms: 5000 } }, token);
      expect(s.status).to.equal(201);
      id = (await call('POST', `/ops/resilience/scenarios/${s.body.scenario_id}/run`, undefined, token)).body.experiment_id;
      await until(async () => (await call('GET', `/ops/resilience/experiments/${id}`, undefined, token)).body.injected_at, 10_000, 'injected in the child');
    } finally {
      proc.kill('SIGKILL');
      await exited;
    }
    const t = await startHost({ dataDir, plugins: [...MESH_PLUGINS, chaosPlugin], config: { mesh: { only: ['analytics'] }, chaos: { ...FAST_CHAOS, seedBuiltins: false } } });
    try {
      const e = (await until(async () => {
        const r = (await t.request('GET', `/ops/resilience/experiments/${id}`)).body;
        return r.status !== 'running' ? r : null;
      }, 5000, 'the takeover'))!;
      expect(e.status).to.equal('failed');
      expect(e.reason).to.match(/the process running it ended before it finished/);
      expect(e.rolled_back_at).to.be.a('string');
      expect(e.injections).to.have.length(1);
      expect(e.injections[0].rolled_back_at).to.be.a('string');
      expect(e.injections[0].rollback_note).to.be.a('string');
      expect(t.host.services.mesh.nodes().every((n) => n.control === null && n.state === 'active')).to.equal(true);
      const ended = await t.host.services.actions.list({ limit: 10, action: 'chaos_experiment_ended' });
      expect(ended.actions.find((a) => a.cause === id)?.detail).to.include({ status: 'failed' });
      // Nothing is left running: a new run on the domain starts.
      const s = await t.request('POST', '/ops/resilience/scenarios', { body: { name: 'after', injection_type: 'latency', target_domains: ['analytics'], parameters: { latency_ms: 1 }, duration_seconds: 1 } });
      expect((await t.request('POST', `/ops/resilience/scenarios/${s.body.scenario_id}/run`)).status).to.equal(202);
    } finally {
      await t.stop();
    }
  });
});
