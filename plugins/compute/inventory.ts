import crypto from 'node:crypto';
import os from 'node:os';
import type { Config } from '../../core/config';
import type { Allocation, ComputeInventory, CpuMetrics, GpuDevice, Provider } from '../../core/contracts/compute';
import type { Db, Migration } from '../../core/db';
import { NotConfigured, NotFound, Unavailable } from '../../core/errors';
import type { Clock } from '../../core/services';
import { cpuUtilisation, memoryAvailable, readGpus } from './machine';

export const LOCAL = 'local';

export const computeMigrations: Migration[] = [
  {
    name: '001_compute_allocations',
    async up(db) {
      await db.schema.createTable('compute_allocations', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('device_id', 128).notNullable();
        t.string('provider', 32).notNullable();
        t.string('region', 64).notNullable();
        t.string('holder_kind', 32).notNullable();
        t.string('holder_id', 64).notNullable();
        t.string('workload_type', 64);
        t.string('created_at', 32).notNullable();
        t.string('released_at', 32);
        t.index(['tenant_id', 'released_at']);
      });
    },
  },
];

/**
 * The inventory: the local provider is this machine (its CPUs, memory and GPUs as read);
 * outside providers come from config and are usable only with credentials. There is no client
 * for an outside cloud's API in this build, so a configured one lists its configured regions
 * only (see docs/groups/uaicp-aiops.md).
 */
export class Inventory implements ComputeInventory {
  constructor(
    private readonly config: Config,
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  providers(): Provider[] {
    const c = this.config.compute;
    const price = (p: { cpuHour: string; gpuHour: string; currency: string } | undefined) => (p ? { cpu_hour: p.cpuHour, gpu_hour: p.gpuHour, currency: p.currency } : null);
    const local: Provider = {
      id: LOCAL,
      kind: 'local',
      status: 'available',
      config_key: null,
      regions: [{ id: c.local.region, provider: LOCAL, location: c.local.location, residency: c.local.residency }],
      price: price(c.local.price),
    };
    const outside = Object.entries(c.providers).map(([id, p]): Provider => {
      const configured = !!p.credentials && Object.keys(p.credentials).length > 0;
      return {
        id,
        kind: p.kind,
        status: configured ? 'available' : 'not_configured',
        config_key: configured ? null : `compute.providers.${id}.credentials`,
        regions: p.regions.map((r) => ({ id: r.id, provider: id, location: r.location ?? null, residency: r.residency })),
        price: price(p.price),
      };
    });
    return [local, ...outside];
  }

  usable(providerId: string): Provider {
    const p = this.providers().find((x) => x.id === providerId);
    if (!p) throw new NotFound(`No provider ${providerId}`, 'PROVIDER_NOT_FOUND');
    if (p.status === 'not_configured') throw new NotConfigured(p.config_key!, `Provider ${providerId} (${p.kind})`);
    return p;
  }

  async gpus(providerId = LOCAL): Promise<GpuDevice[]> {
    this.usable(providerId);
    // Outside providers: this build has no AWS/GCP/Azure API client (no SDK is installed and
    // nothing here could reach one), so their devices cannot be read: a clear 503, never [].
    if (providerId !== LOCAL) throw new Unavailable(`Provider ${providerId}: this build has no ${this.providers().find((p) => p.id === providerId)!.kind} API client, so its devices cannot be read`, undefined, 'NO_PROVIDER_CLIENT');
    const region = this.config.compute.local.region;
    return (await readGpus(this.config.compute.nvidiaSmi)).map((g) => ({
      id: g.uuid || `${LOCAL}-gpu-${g.index}`,
      provider: LOCAL,
      region,
      index: g.index,
      name: g.name,
      memory_total_mb: g.memory_total_mb,
      memory_used_mb: g.memory_used_mb,
      utilization_pct: g.utilization_pct,
      temperature_c: g.temperature_c,
      power_w: g.power_w,
    }));
  }

  async cpu(): Promise<CpuMetrics> {
    const sampleMs = 100;
    const cpus = os.cpus();
    const la = os.loadavg();
    return {
      provider: LOCAL,
      region: this.config.compute.local.region,
      model: cpus[0]?.model ?? 'unknown',
      cores: cpus.length,
      utilization_pct: await cpuUtilisation(sampleMs),
      sample_ms: sampleMs,
      load_average: [la[0]!, la[1]!, la[2]!].map((x) => Math.round(x * 100) / 100) as [number, number, number],
      memory_total_bytes: os.totalmem(),
      memory_available_bytes: await memoryAvailable(),
      read_at: this.clock.now().toISOString(),
    };
  }

  async allocations(tenantId: string | null): Promise<Allocation[]> {
    const q = this.db('compute_allocations').whereNull('released_at').orderBy('created_at', 'desc').limit(1000);
    if (tenantId) q.where('tenant_id', tenantId);
    return q;
  }

  async allocate(a: Omit<Allocation, 'id' | 'created_at' | 'released_at'>): Promise<Allocation> {
    const row: Allocation = { ...a, id: crypto.randomUUID(), created_at: this.clock.now().toISOString(), released_at: null };
    await this.db('compute_allocations').insert(row);
    return row;
  }

  release(tenantId: string, holderId: string): Promise<number> {
    return this.db('compute_allocations').where({ tenant_id: tenantId, holder_id: holderId }).whereNull('released_at').update({ released_at: this.clock.now().toISOString() });
  }

  kernelFor(workloadType: string): string | null {
    return this.config.compute.workloadKernels[workloadType] ?? null;
  }
}
