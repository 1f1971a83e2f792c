// The one model registry that the aiops and uaicp plugins both read. Provided by plugins/aiops.
import { createServiceRef } from '../plugin';

export interface ModelPrice {
  /** Decimal strings per million tokens. */
  input_per_million: string;
  output_per_million: string;
  currency: string;
}

export interface Model {
  id: string;
  tenant_id: string;
  name: string;
  version: string;
  provider: string;
  task: string;
  endpoint: string | null;
  kernel: string | null;
  price: ModelPrice;
  /** What training produced (weights, scaling, features), for a model trained here. */
  parameters: Record<string, unknown> | null;
  training_job_id: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface NewModel {
  name: string;
  version?: string;
  provider: string;
  task: string;
  endpoint?: string | null;
  kernel?: string | null;
  price: ModelPrice;
  parameters?: Record<string, unknown> | null;
  training_job_id?: string | null;
}

export interface ModelRegistry {
  /** 409 MODEL_VERSION_EXISTS when the tenant has this name and version; the next integer version when none is given. */
  register(tenantId: string, actor: string, m: NewModel): Promise<Model>;
  /** 404 for another tenant's model. */
  get(tenantId: string, id: string): Promise<Model>;
  /** Every model of a tenant (bounded), newest first. */
  all(tenantId: string, filter?: { task?: string; provider?: string; name?: string }): Promise<Model[]>;
  count(tenantId: string | null): Promise<number>;
  /** New prices for a model (providers change theirs); 404 for another tenant's model. */
  setPrice(tenantId: string, id: string, price: ModelPrice): Promise<Model>;
}

export const modelRegistryRef = createServiceRef<ModelRegistry>('aiops.models');
