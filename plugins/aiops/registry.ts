import crypto from 'node:crypto';
import type { Model, ModelRegistry, NewModel } from '../../core/contracts/models';
import type { Db } from '../../core/db';
import { Conflict, NotFound } from '../../core/errors';
import type { Clock } from '../../core/services';
import { fromMicros, toMicros } from '../../core/money';
import { json } from './store';

export function toModel(r: Record<string, any>): Model {
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    name: r.name,
    version: r.version,
    provider: r.provider,
    task: r.task,
    endpoint: r.endpoint ?? null,
    kernel: r.kernel ?? null,
    price: { input_per_million: fromMicros(Number(r.input_price_micros)), output_per_million: fromMicros(Number(r.output_price_micros)), currency: r.currency },
    parameters: json(r.parameters),
    training_job_id: r.training_job_id ?? null,
    created_by: r.created_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** The model registry: one row per tenant, name and version; prices are data an operator updates. */
export class Registry implements ModelRegistry {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  private async nextVersion(tenantId: string, name: string): Promise<string> {
    const rows: Array<{ version: string }> = await this.db('aiops_models').where({ tenant_id: tenantId, name }).select('version');
    const ints = rows.map((r) => Number(r.version)).filter((v) => Number.isInteger(v) && v > 0);
    return String(ints.length ? Math.max(...ints) + 1 : 1);
  }

  async register(tenantId: string, actor: string, m: NewModel): Promise<Model> {
    const version = m.version ?? (await this.nextVersion(tenantId, m.name));
    if (await this.db('aiops_models').where({ tenant_id: tenantId, name: m.name, version }).first()) {
      throw new Conflict(`Model ${m.name} version ${version} is already registered`, 'MODEL_VERSION_EXISTS');
    }
    const now = this.clock.now().toISOString();
    const row = {
      id: crypto.randomUUID(),
      tenant_id: tenantId,
      name: m.name,
      version,
      provider: m.provider,
      task: m.task,
      endpoint: m.endpoint ?? null,
      kernel: m.kernel ?? null,
      input_price_micros: toMicros(m.price.input_per_million, ['body', 'price', 'input_per_million']),
      output_price_micros: toMicros(m.price.output_per_million, ['body', 'price', 'output_per_million']),
      currency: m.price.currency,
      parameters: m.parameters ? JSON.stringify(m.parameters) : null,
      training_job_id: m.training_job_id ?? null,
      created_by: actor,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.db('aiops_models').insert(row);
    } catch (err) {
      // Two registrations of one version at once: the unique index decides.
      if (/unique|duplicate/i.test((err as Error).message)) throw new Conflict(`Model ${m.name} version ${version} is already registered`, 'MODEL_VERSION_EXISTS');
      throw err;
    }
    return toModel(row);
  }

  async get(tenantId: string, id: string): Promise<Model> {
    const r = await this.db('aiops_models').where({ tenant_id: tenantId, id }).first();
    if (!r) throw new NotFound(`No model ${id}`, 'MODEL_NOT_FOUND');
    return toModel(r);
  }

  async all(tenantId: string, f: { task?: string; provider?: string; name?: string } = {}): Promise<Model[]> {
    const q = this.db('aiops_models').where('tenant_id', tenantId).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(1000);
    if (f.task) q.where('task', f.task);
    if (f.provider) q.where('provider', f.provider);
    if (f.name) q.where('name', f.name);
    return (await q).map(toModel);
  }

  async count(tenantId: string | null): Promise<number> {
    const q = this.db('aiops_models');
    if (tenantId) q.where('tenant_id', tenantId);
    const r = (await q.count({ n: '*' }).first()) as { n: unknown } | undefined;
    return Number(r?.n ?? 0);
  }

  /** New prices (operators update them as providers change theirs). */
  async setPrice(tenantId: string, id: string, price: Model['price']): Promise<Model> {
    await this.get(tenantId, id);
    await this.db('aiops_models').where({ tenant_id: tenantId, id }).update({
      input_price_micros: toMicros(price.input_per_million, ['body', 'input_per_million']),
      output_price_micros: toMicros(price.output_per_million, ['body', 'output_per_million']),
      currency: price.currency,
      updated_at: this.clock.now().toISOString(),
    });
    return this.get(tenantId, id);
  }
}
