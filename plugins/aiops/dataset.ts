// Training data the platform holds: ingested llm-call events and recorded kernel task
// outcomes of the tenant, as feature rows and a label.
import { z } from 'zod';
import type { Db } from '../../core/db';
import { invalid } from '../../core/errors';

export const SOURCES = {
  'llm-calls': { features: ['input_tokens', 'output_tokens', 'duration_ms', 'cost_usd'], binary: { error: "status = 'error'" }, numeric: ['duration_ms', 'cost_usd', 'output_tokens', 'input_tokens'] },
  'task-outcomes': { features: ['duration_ms', 'wait_ms'], binary: { failed: 'NOT ok' }, numeric: ['duration_ms', 'wait_ms'] },
} as const;
type Source = keyof typeof SOURCES;

export const datasetSchema = z.object({
  source: z.enum(Object.keys(SOURCES) as [Source, ...Source[]]),
  features: z.array(z.string()).min(1).max(8),
  label: z.string(),
  /** llm-calls: only this model's calls; task-outcomes: only this kernel's tasks. */
  model: z.string().min(1).max(128).optional(),
  kernel: z.string().min(1).max(64).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  max_rows: z.number().int().min(10).max(50_000).default(10_000),
});
export type Dataset = z.output<typeof datasetSchema>;

export const MIN_ROWS = 10;

/** Checks the features and label against the source and the model kind (422 naming the field). */
export function checkDataset(d: Dataset, kind: 'linear' | 'logistic'): void {
  const s = SOURCES[d.source];
  d.features.forEach((f, i) => {
    if (!(s.features as readonly string[]).includes(f)) throw invalid(['body', 'dataset', 'features', i], `unknown feature ${f} of ${d.source}; known: ${s.features.join(', ')}`);
  });
  const binary = Object.keys(s.binary);
  if (kind === 'logistic' && !binary.includes(d.label)) throw invalid(['body', 'dataset', 'label'], `a logistic model needs a yes/no label of ${d.source}: ${binary.join(', ')}`);
  if (kind === 'linear' && !(s.numeric as readonly string[]).includes(d.label)) throw invalid(['body', 'dataset', 'label'], `a linear model needs a numeric label of ${d.source}: ${s.numeric.join(', ')}`);
  if (kind === 'linear' && d.features.includes(d.label)) throw invalid(['body', 'dataset', 'label'], 'the label cannot also be a feature');
}

function query(db: Db, tenantId: string, d: Dataset) {
  const s = SOURCES[d.source];
  const label = (s.binary as Record<string, string>)[d.label] ? `CASE WHEN ${(s.binary as Record<string, string>)[d.label]} THEN 1 ELSE 0 END` : d.label;
  // Feature and label names were checked against the whitelist above; none comes from the caller as SQL.
  const select = [...d.features.map((f, i) => `${f} AS f${i}`), `${label} AS y`];
  if (d.source === 'llm-calls') {
    const q = db('telemetry_events').where({ tenant_id: tenantId, type: 'llm-call' }).select(db.raw(select.join(', ')));
    for (const f of d.features) q.whereNotNull(f);
    if (d.label !== 'error') q.whereNotNull(d.label);
    if (d.model) q.where('model', d.model);
    if (d.since) q.where('ts', '>=', new Date(d.since).toISOString());
    if (d.until) q.where('ts', '<', new Date(d.until).toISOString());
    return q.orderBy('ts');
  }
  const q = db('task_outcomes').where('tenant_id', tenantId).select(db.raw(select.join(', ')));
  if (d.kernel) q.where('kernel_id', d.kernel);
  if (d.since) q.where('at', '>=', new Date(d.since).toISOString());
  if (d.until) q.where('at', '<', new Date(d.until).toISOString());
  return q.orderBy('seq');
}

export async function countRows(db: Db, tenantId: string, d: Dataset): Promise<number> {
  const r = (await db.count({ n: '*' }).from(query(db, tenantId, d).clearOrder().as('d')).first()) as { n: unknown } | undefined;
  return Math.min(Number(r?.n ?? 0), d.max_rows);
}

export async function loadRows(db: Db, tenantId: string, d: Dataset): Promise<{ x: number[][]; y: number[] }> {
  const rows: Array<Record<string, unknown>> = await query(db, tenantId, d).limit(d.max_rows);
  return { x: rows.map((r) => d.features.map((_, i) => Number(r[`f${i}`]))), y: rows.map((r) => Number(r.y)) };
}
