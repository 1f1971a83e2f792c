import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { startGroup, type Group } from '../uaicp/setup';

// nvidia-smi as a machine with two GPUs answers the inventory's query (the CSV boundary only):
// this machine has none, so the GPU paths are tested against this stand-in binary.
const CSV = ['0, GPU-aaaa, NVIDIA A100-SXM4-40GB, 40960, 1024, 37, 41, 61.50', '1, GPU-bbbb, NVIDIA A100-SXM4-40GB, 40960, 30720, 88, 65, [N/A]'];

describe('uaicp and aiops on a machine with GPUs', function () {
  this.timeout(60_000);
  let g: Group;
  let dir: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-smi-'));
    const bin = path.join(dir, 'nvidia-smi');
    fs.writeFileSync(bin, `#!/bin/sh\ncase "$1" in --query-gpu=index,uuid,name,memory.total,memory.used,utilization.gpu,temperature.gpu,power.draw) ;; *) exit 2 ;; esac\nprintf '%s\\n' ${CSV.map((l) => `'${l}'`).join(' ')}\n`, { mode: 0o755 });
    g = await startGroup({ compute: { nvidiaSmi: bin, providers: { gcp: { kind: 'gcp', credentials: { key: 'k' }, regions: [{ id: 'europe-west1', residency: 'EU' }] } } } });
  });
  after(async () => {
    await g.t.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const req = (method: string, p: string, token: string | null, body?: unknown) => g.t.request(method, p, { token, body });

  it('answers a clear 503 for a GPU benchmark and for the devices of a cloud with credentials', async () => {
    const bench = await req('POST', '/uaicp/gpus/benchmark', g.operator, { device: 'gpu' });
    expect(bench.status).to.equal(503);
    expect(bench.body).to.include({ code: 'GPU_BENCHMARK_UNAVAILABLE' });
    expect(bench.body.detail).to.contain('2 GPU(s) seen by nvidia-smi');
    const gcp = await req('GET', '/uaicp/gpus?provider=gcp', g.viewer);
    expect(gcp.status).to.equal(503);
    expect(gcp.body).to.deep.equal({ detail: 'Provider gcp: this build has no gcp API client, so its devices cannot be read', code: 'NO_PROVIDER_CLIENT' });
  });

  it('lists the devices as nvidia-smi reports them, unreported fields null', async () => {
    const r = await req('GET', '/uaicp/gpus/metrics', g.viewer);
    expect(r.body.gpus).to.deep.equal([
      { id: 'GPU-aaaa', provider: 'local', region: 'local', index: 0, name: 'NVIDIA A100-SXM4-40GB', memory_total_mb: 40960, memory_used_mb: 1024, utilization_pct: 37, temperature_c: 41, power_w: 61.5 },
      { id: 'GPU-bbbb', provider: 'local', region: 'local', index: 1, name: 'NVIDIA A100-SXM4-40GB', memory_total_mb: 40960, memory_used_mb: 30720, utilization_pct: 88, temperature_c: 65, power_w: null },
    ]);
  });

  it('gives a workload that needs GPU memory a whole device, and releases it', async () => {
    const route = (token = g.member) => req('POST', '/uaicp/workloads/route', token, { workload_type: 'analytics', requirements: { gpu_memory: 16 } });
    const first = await route();
    expect(first.status).to.equal(200);
    // GPU-aaaa has 39 GB free, GPU-bbbb 10 GB.
    expect(first.body.choice.gpu_memory_free_gb).to.equal(39);
    expect(first.body.gpu_allocation_id).to.be.a('string');
    const held = await req('GET', '/uaicp/gpus', g.viewer);
    expect(held.body.allocations.map((a: any) => [a.device_id, a.holder_id])).to.deep.equal([['GPU-aaaa', first.body.workload_id]]);
    const seen = await req('GET', '/aiops/gpu/allocations', g.viewer);
    expect(seen.body.devices).to.equal(2);
    expect(seen.body.allocations.map((a: any) => a.device_id)).to.deep.equal(['GPU-aaaa']);
    expect((await req('GET', '/aiops/gpu/allocations', g.acme)).body.allocations).to.deep.equal([]);
    // The other device has too little memory: nothing can take a second such workload.
    const second = await route();
    expect(second.status).to.equal(409);
    expect(second.body.unmet).to.deep.equal(['gpu_memory']);
    const release = (id: string, token = g.member) => req('POST', `/uaicp/workloads/${id}/release`, token);
    expect((await release(first.body.workload_id, g.acme)).status).to.equal(404);
    expect((await release(first.body.workload_id, g.viewer)).status).to.equal(403);
    expect((await release(first.body.workload_id)).body).to.deep.equal({ workload_id: first.body.workload_id, released: 1 });
    const again = await release(first.body.workload_id);
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('NOTHING_HELD');
    expect((await req('GET', '/uaicp/gpus', g.viewer)).body.allocations).to.deep.equal([]);
    expect((await route()).status).to.equal(200);
  });
});
