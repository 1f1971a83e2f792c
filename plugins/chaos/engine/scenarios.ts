// Scenarios: built-in ones (seeded idempotently, tenant_id null, visible to every tenant) and
// the ones operators create (their tenant's).
import crypto from 'node:crypto';
import { decodeCursor, encodeCursor } from '../../../core/actions';
import { nowIso, type Db } from '../../../core/db';
import { invalid, NotFound, Unprocessable } from '../../../core/errors';
import { INJECTION_TYPES, PARAMETER_SCHEMAS, hypothesis, type InjectionType, type Scenario, type ScenarioInput } from './schemas';
import { scenarioOf } from './store';

/** A stable UUID (version 5 layout) for a built-in, so that every host and restart agrees on it. */
export function builtinId(key: string): string {
  const h = crypto.createHash('sha1').update(`chaos-builtin:${key}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

const BUILTINS: Array<{ key: string; name: string; injection_type: InjectionType; parameters: Record<string, number>; duration_seconds: number; hypothesis: { min_success_ratio: number; max_latency_p99_ms: number; description: string } }> = [
  { key: 'latency', name: 'Latency: 200 ms (±50) on every node', injection_type: 'latency', parameters: { latency_ms: 200, jitter_ms: 50 }, duration_seconds: 60, hypothesis: { description: 'Tasks keep succeeding and stay under one second at p99', min_success_ratio: 0.99, max_latency_p99_ms: 1000 } },
  { key: 'error', name: 'Errors: 20% of tasks fail on half the nodes', injection_type: 'error', parameters: { error_rate: 0.2, node_share: 0.5 }, duration_seconds: 60, hypothesis: { description: 'At least 95% of tasks succeed', min_success_ratio: 0.95, max_latency_p99_ms: 1000 } },
  { key: 'worker_crash', name: 'Worker crash: one thread of every node every 5 s', injection_type: 'worker_crash', parameters: { interval_ms: 5000, threads_per_crash: 1 }, duration_seconds: 60, hypothesis: { description: 'Crashed threads are replaced without failing tasks', min_success_ratio: 0.95, max_latency_p99_ms: 2000 } },
  { key: 'cpu_stress', name: 'CPU stress: threads busy half of every 100 ms', injection_type: 'cpu_stress', parameters: { cpu_share: 0.5, period_ms: 100 }, duration_seconds: 60, hypothesis: { description: 'Tasks stay under 500 ms at p99 on busy threads', min_success_ratio: 0.99, max_latency_p99_ms: 500 } },
  { key: 'node_pause', name: 'Node pause: half the nodes of each kernel', injection_type: 'node_pause', parameters: { node_share: 0.5 }, duration_seconds: 60, hypothesis: { description: 'The remaining nodes take the work', min_success_ratio: 0.99, max_latency_p99_ms: 1000 } },
];

/** Inserts the built-ins that are missing and refreshes the others (targets: every kernel of the mesh). */
export async function seedBuiltins(db: Db, domains: string[]): Promise<void> {
  if (domains.length === 0) return;
  for (const b of BUILTINS) {
    const id = builtinId(b.key);
    const row = { name: b.name, injection_type: b.injection_type, target_domains: JSON.stringify(domains), parameters: JSON.stringify(PARAMETER_SCHEMAS[b.injection_type].parse(b.parameters)), duration_seconds: b.duration_seconds, hypothesis: JSON.stringify(hypothesis.parse(b.hypothesis)) };
    const n = await db('chaos_scenarios').where({ id }).update(row);
    if (!n) {
      await db('chaos_scenarios')
        .insert({ id, tenant_id: null, builtin: true, created_by: 'chaos', created_at: nowIso(), ...row })
        .onConflict('id')
        .ignore();
    }
  }
}

/** Checks the type and its parameters (422 with the parameter's location) and answers the parsed parameters. */
export function checkParameters(type: string, parameters: Record<string, unknown>): Record<string, number> {
  if (!(INJECTION_TYPES as readonly string[]).includes(type)) throw invalid(['body', 'injection_type'], `unknown injection type "${type}"; known: ${INJECTION_TYPES.join(', ')}`);
  const r = PARAMETER_SCHEMAS[type as InjectionType].safeParse(parameters);
  if (!r.success) throw new Unprocessable(r.error.issues.map((i) => ({ loc: ['body', 'parameters', ...(i.path as Array<string | number>)], msg: i.message, type: i.code })));
  return r.data as Record<string, number>;
}

export async function createScenario(db: Db, input: ScenarioInput, caller: { id: string; tenantId: string }, knownDomains: string[]): Promise<Scenario> {
  const parameters = checkParameters(input.injection_type, input.parameters);
  input.target_domains.forEach((d, i) => {
    if (!knownDomains.includes(d)) throw invalid(['body', 'target_domains', i], `unknown domain "${d}"; kernels: ${knownDomains.join(', ') || 'none'}`);
  });
  const row = {
    id: crypto.randomUUID(),
    tenant_id: caller.tenantId,
    builtin: false,
    name: input.name,
    injection_type: input.injection_type,
    target_domains: JSON.stringify([...new Set(input.target_domains)]),
    parameters: JSON.stringify(parameters),
    duration_seconds: input.duration_seconds,
    hypothesis: JSON.stringify(input.hypothesis),
    created_by: caller.id,
    created_at: nowIso(),
  };
  await db('chaos_scenarios').insert(row);
  return scenarioOf(row);
}

/** The tenant's scenarios and the built-ins. */
function visible(db: Db, tenantId: string) {
  return db('chaos_scenarios').where((w) => w.where('tenant_id', tenantId).orWhereNull('tenant_id'));
}

export async function getScenario(db: Db, tenantId: string, id: string): Promise<Scenario> {
  const row = await visible(db, tenantId).andWhere({ id }).first();
  if (!row) throw new NotFound(`Scenario ${id} not found`);
  return scenarioOf(row);
}

/** Oldest first (built-ins lead); the cursor is the created_at|id of the last row seen. */
export async function listScenarios(db: Db, tenantId: string, q: { limit: number; cursor?: string; injection_type?: string; domain?: string }): Promise<{ scenarios: Scenario[]; next_cursor: string | null }> {
  const query = visible(db, tenantId).orderBy([{ column: 'created_at' }, { column: 'id' }]);
  if (q.injection_type) query.andWhere({ injection_type: q.injection_type });
  if (q.cursor) {
    let at: string, id: string;
    try {
      [at, id] = decodeCursor(q.cursor) as [string, string];
    } catch {
      throw invalid(['query', 'cursor'], 'malformed cursor');
    }
    query.andWhere((w) => w.where('created_at', '>', at).orWhere((x) => x.where('created_at', at).andWhere('id', '>', id)));
  }
  // The domain filter reads the JSON list; it is applied in memory on a bounded read.
  const rows = q.domain ? (await query.limit(5000)).filter((r) => (JSON.parse(r.target_domains) as string[]).includes(q.domain!)).slice(0, q.limit + 1) : await query.limit(q.limit + 1);
  const page = rows.slice(0, q.limit).map(scenarioOf);
  const last = rows.length > q.limit ? rows[q.limit - 1] : undefined;
  return { scenarios: page, next_cursor: last ? encodeCursor(last.created_at, last.id) : null };
}
