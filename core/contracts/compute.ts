// The one inventory of compute (providers, regions, devices, allocations) that the uaicp and
// aiops plugins both read. Provided by plugins/compute.
import { createServiceRef } from '../plugin';

export interface Price {
  /** Decimal strings per hour; null when no operator has set a price. */
  cpu_hour: string;
  gpu_hour: string;
  currency: string;
}

export interface Region {
  id: string;
  provider: string;
  location: string | null;
  residency: string | null;
}

export interface Provider {
  id: string;
  kind: 'local' | 'aws' | 'gcp' | 'azure';
  /** configured: credentials (or, for local, the machine) are there; not_configured: they are not. */
  status: 'available' | 'not_configured';
  /** The config key to set, for an outside provider that is not configured. */
  config_key: string | null;
  regions: Region[];
  /** Null when the operator set no price (cost then counts as unknown, never invented). */
  price: Price | null;
}

/** One GPU as read from the device (nvidia-smi); fields it does not report are null. */
export interface GpuDevice {
  id: string;
  provider: string;
  region: string;
  index: number;
  name: string;
  memory_total_mb: number | null;
  memory_used_mb: number | null;
  utilization_pct: number | null;
  temperature_c: number | null;
  power_w: number | null;
}

export interface CpuMetrics {
  provider: string;
  region: string;
  model: string;
  cores: number;
  /** Busy share of all cores over the sampling interval, from /proc/stat (null where there is none). */
  utilization_pct: number | null;
  sample_ms: number;
  load_average: [number, number, number];
  memory_total_bytes: number;
  memory_available_bytes: number;
  read_at: string;
}

/** A device held by a workload (a routed workload, a training job, a model). */
export interface Allocation {
  id: string;
  tenant_id: string;
  device_id: string;
  provider: string;
  region: string;
  holder_kind: string;
  holder_id: string;
  workload_type: string | null;
  created_at: string;
  released_at: string | null;
}

export interface ComputeInventory {
  providers(): Provider[];
  /** One provider; 404 when unknown, 503 NOT_CONFIGURED when it has no credentials. */
  usable(providerId: string): Provider;
  /**
   * The local provider's GPUs as read now (an empty list on a machine without one). An outside
   * provider: 503 NOT_CONFIGURED without credentials, NO_PROVIDER_CLIENT with them (no cloud
   * API client in this build).
   */
  gpus(providerId?: string): Promise<GpuDevice[]>;
  cpu(): Promise<CpuMetrics>;
  /** Open allocations; a tenant's own, or every tenant's when tenantId is null. */
  allocations(tenantId: string | null): Promise<Allocation[]>;
  allocate(a: Omit<Allocation, 'id' | 'created_at' | 'released_at'>): Promise<Allocation>;
  release(tenantId: string, holderId: string): Promise<number>;
  /** The kernel a workload type runs on, or null. */
  kernelFor(workloadType: string): string | null;
}

export const computeRef = createServiceRef<ComputeInventory>('compute.inventory');
