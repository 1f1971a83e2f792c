import crypto from 'node:crypto';
import { z } from 'zod';
import type { Config } from '../../core/config';
import type { UsageMeter } from '../../core/contracts/usage';
import type { Db } from '../../core/db';
import { HttpError, NotFound } from '../../core/errors';
import type { Mesh } from '../../core/mesh/mesh';
import type { Caller } from '../../core/roles';
import type { Ledger } from './ledger';
import { bpsOf, money, moneySchema } from './money';

export const ITEM_STATES = ['draft', 'published', 'rejected'] as const;

export const itemView = z.object({
  id: z.string(),
  tenant_id: z.string(),
  kind: z.enum(['workflow', 'kernel_task']),
  name: z.string(),
  description: z.string(),
  workflow_id: z.string().nullable(),
  kernel: z.string().nullable(),
  task: z.string().nullable(),
  steps: z.array(z.object({ id: z.string(), kernel: z.string(), task: z.string(), input: z.unknown() })),
  price_per_run: moneySchema,
  state: z.enum(ITEM_STATES),
  review_note: z.string().nullable(),
  reviewed_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  published_at: z.string().nullable(),
});
export type ItemView = z.infer<typeof itemView>;
export interface Step {
  id: string;
  kernel: string;
  task: string;
  input: unknown;
}

export function toItem(r: Record<string, any>, currencies: Record<string, number>): ItemView {
  return {
    id: r.id, tenant_id: r.tenant_id, kind: r.kind, name: r.name, description: r.description, workflow_id: r.workflow_id ?? null, kernel: r.kernel ?? null, task: r.task ?? null,
    steps: JSON.parse(r.steps), price_per_run: money(Number(r.price_per_run), r.currency, currencies), state: r.state, review_note: r.review_note ?? null,
    reviewed_by: r.reviewed_by ?? null, created_at: r.created_at, updated_at: r.updated_at, published_at: r.published_at ?? null,
  };
}

export const runView = z.object({
  run_id: z.string(),
  item_id: z.string(),
  workflow_id: z.string().nullable(),
  tenant_id: z.string(),
  key_id: z.string().nullable(),
  state: z.enum(['succeeded', 'failed']),
  error: z.string().nullable(),
  steps: z.array(z.object({ id: z.string(), state: z.enum(['succeeded', 'failed', 'skipped']), duration_ms: z.number().nullable(), output: z.unknown(), error: z.string().nullable() })),
  duration_ms: z.number(),
  charged: moneySchema,
  transaction_id: z.string().nullable(),
  created_at: z.string(),
});
export type RunView = z.infer<typeof runView>;

// `${steps.<id>.output[.path]}`: the reference form of workflow step inputs.
const REF = /\$\{\s*steps\.([a-z][a-z0-9_]*)\.output((?:\.[A-Za-z0-9_-]+)*)\s*\}/g;
const WHOLE = /^\$\{\s*steps\.([a-z][a-z0-9_]*)\.output((?:\.[A-Za-z0-9_-]+)*)\s*\}$/;

function lookup(outputs: Map<string, unknown>, step: string, path: string): unknown {
  let v: unknown = outputs.get(step);
  for (const k of path.split('.').filter(Boolean)) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** Fills references to earlier steps' outputs into a step's input. */
export function resolveRefs(input: unknown, outputs: Map<string, unknown>): unknown {
  if (typeof input === 'string') {
    const whole = WHOLE.exec(input);
    if (whole) return lookup(outputs, whole[1], whole[2]);
    return input.replace(REF, (_m, step: string, path: string) => {
      const v = lookup(outputs, step, path);
      return typeof v === 'string' ? v : JSON.stringify(v);
    });
  }
  if (Array.isArray(input)) return input.map((x) => resolveRefs(x, outputs));
  if (input && typeof input === 'object') return Object.fromEntries(Object.entries(input).map(([k, v]) => [k, resolveRefs(v, outputs)]));
  return input;
}

/** Runs a published item for a caller, charges its tenant and pays the publisher (one ledger transaction). */
export class PublicRunner {
  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly mesh: Mesh,
    private readonly ledger: Ledger,
    private readonly usage: UsageMeter,
    private readonly now: () => Date,
  ) {}

  async findPublished(workflowId: string): Promise<Record<string, any>> {
    const row = await this.db('marketplace_items').where({ state: 'published' }).andWhere((w) => w.where('workflow_id', workflowId).orWhere('id', workflowId)).orderBy('published_at', 'desc').first();
    if (!row) throw new NotFound('No published marketplace item runs this workflow');
    return row;
  }

  async priorRun(tenantId: string, key: string): Promise<RunView | null> {
    const r = await this.db('marketplace_runs').where({ tenant_id: tenantId, idempotency_key: key }).first();
    return r ? this.view(r) : null;
  }

  async run(item: Record<string, any>, caller: Caller, input: Record<string, unknown> | undefined, idemKey: string | null): Promise<RunView> {
    const steps = JSON.parse(item.steps) as Step[];
    if (item.kind === 'kernel_task' && input) steps[0] = { ...steps[0], input: { ...(steps[0].input as object), ...input } };
    const t0 = performance.now();
    const outputs = new Map<string, unknown>();
    const results: RunView['steps'] = [];
    let error: string | null = null;
    for (const s of steps) {
      if (error) {
        results.push({ id: s.id, state: 'skipped', duration_ms: null, output: null, error: null });
        continue;
      }
      const s0 = performance.now();
      try {
        const out = await this.mesh.run(s.kernel, s.task, resolveRefs(s.input, outputs), { caller });
        outputs.set(s.id, out);
        results.push({ id: s.id, state: 'succeeded', duration_ms: ms(s0), output: out, error: null });
      } catch (err) {
        error = `step ${s.id}: ${err instanceof HttpError ? (typeof err.detail === 'string' ? err.detail : JSON.stringify(err.detail)) : (err as Error).message}`;
        results.push({ id: s.id, state: 'failed', duration_ms: ms(s0), output: null, error });
      }
    }
    const price = Number(item.price_per_run);
    const charged = error ? 0 : price;
    const keyId = caller.kind === 'api_key' ? caller.id : null;
    const run = {
      id: crypto.randomUUID(), tenant_id: caller.tenantId, item_id: item.id, publisher_tenant_id: item.tenant_id, key_id: keyId, state: error ? 'failed' : 'succeeded', error,
      duration_ms: ms(t0), charged, currency: item.currency, transaction_id: null as string | null, idempotency_key: idemKey, output: JSON.stringify(results), created_at: this.now().toISOString(),
    };
    const write = this.db.transaction(async (trx) => {
      if (charged > 0) {
        const share = bpsOf(charged, this.config.billing.publisherShareBps);
        const txn = await this.ledger.post({
          tenantId: caller.tenantId, kind: 'charge', currency: item.currency, amount: charged, reference: { type: 'marketplace_item', id: item.id }, memo: `Run of "${item.name}"`,
          detail: { run_id: run.id, key_id: keyId, publisher: item.tenant_id },
          entries: [
            { account: `receivable:${caller.tenantId}`, amount: charged },
            { account: `payable:${item.tenant_id}`, amount: -share },
            { account: 'revenue:marketplace', amount: -(charged - share) },
          ],
        }, trx);
        run.transaction_id = txn.id;
      }
      await trx('marketplace_runs').insert(run);
    });
    try {
      await write;
    } catch (err) {
      // The same Idempotency-Key twice at once: the first run's row won (and only it was charged).
      const first = idemKey ? await this.priorRun(caller.tenantId, idemKey) : null;
      if (first) return first;
      throw err;
    }
    this.usage.record({ tenantId: caller.tenantId, keyId, metric: 'public_runs', dimension: item.id, quantity: 1 });
    return this.view(run);
  }

  view(r: Record<string, any>): RunView {
    return {
      run_id: r.id, item_id: r.item_id, workflow_id: null, tenant_id: r.tenant_id, key_id: r.key_id ?? null, state: r.state, error: r.error ?? null,
      steps: JSON.parse(r.output ?? '[]'), duration_ms: Number(r.duration_ms), charged: money(Number(r.charged), r.currency, this.config.billing.currencies),
      transaction_id: r.transaction_id ?? null, created_at: r.created_at,
    };
  }
}

function ms(t0: number): number {
  return Math.round((performance.now() - t0) * 1000) / 1000;
}
