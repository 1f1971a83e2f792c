// Storage of scenarios, experiments (the journal) and their injections. Every row of a
// tenant's experiment carries tenant_id; built-in scenarios have tenant_id null.
import type { Db, Migration } from '../../../core/db';
import type { Experiment, Injection, Measurement, Scenario } from './schemas';

export const chaosMigrations: Migration[] = [
  {
    name: 'chaos_001',
    async up(db) {
      await db.schema.createTable('chaos_scenarios', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64);
        t.boolean('builtin').notNullable();
        t.string('name', 200).notNullable();
        t.string('injection_type', 32).notNullable();
        t.text('target_domains').notNullable();
        t.text('parameters').notNullable();
        t.integer('duration_seconds').notNullable();
        t.text('hypothesis').notNullable();
        t.string('created_by', 128).notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['tenant_id', 'created_at']);
      });
      await db.schema.createTable('chaos_experiments', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('scenario_id', 36);
        t.string('scenario_name', 200).notNullable();
        t.string('kind', 16).notNullable();
        t.string('injection_type', 32).notNullable();
        t.text('target_domains').notNullable();
        t.text('parameters').notNullable();
        t.integer('duration_seconds').notNullable();
        t.text('hypothesis').notNullable();
        t.string('status', 16).notNullable();
        t.string('phase', 32).notNullable();
        t.boolean('deviated');
        t.text('reason');
        t.text('before');
        t.text('during');
        t.text('after');
        t.text('effects').notNullable();
        t.double('time_to_recover_ms');
        t.string('started_at', 32).notNullable();
        t.string('injected_at', 32);
        t.string('rolled_back_at', 32);
        t.string('ended_at', 32);
        t.string('started_by', 128).notNullable();
        t.string('aborted_by', 128);
        // The process running the experiment and how long its claim holds (renewed while it runs).
        t.string('owner', 36).notNullable();
        t.string('lease_until', 32).notNullable();
        t.index(['tenant_id', 'started_at']);
        t.index(['status']);
      });
      await db.schema.createTable('chaos_injections', (t) => {
        t.string('id', 36).primary();
        t.string('experiment_id', 36).notNullable().references('chaos_experiments.id');
        t.string('tenant_id', 64).notNullable();
        t.string('node_id', 96).notNullable();
        t.string('domain', 64).notNullable();
        t.string('kind', 32).notNullable();
        t.text('detail').notNullable();
        t.string('applied_at', 32);
        t.string('rolled_back_at', 32);
        t.text('rollback_note');
        t.index(['experiment_id']);
        t.index(['rolled_back_at']);
      });
    },
  },
  {
    // The cluster host that runs the experiment (null on a single host): abort goes there.
    name: 'chaos_002_host',
    async up(db) {
      await db.schema.alterTable('chaos_experiments', (t) => {
        t.string('host', 32);
      });
    },
  },
];

type Row = Record<string, any>;
const json = <T>(v: unknown, fallback: T): T => (typeof v === 'string' && v ? (JSON.parse(v) as T) : fallback);
const bool = (v: unknown): boolean | null => (v === null || v === undefined ? null : v === true || v === 1 || v === '1');

export function scenarioOf(r: Row): Scenario {
  return {
    scenario_id: r.id,
    name: r.name,
    injection_type: r.injection_type,
    target_domains: json(r.target_domains, []),
    parameters: json(r.parameters, {}),
    duration_seconds: Number(r.duration_seconds),
    hypothesis: json(r.hypothesis, {} as Scenario['hypothesis']),
    builtin: bool(r.builtin) ?? false,
    tenant_id: r.tenant_id ?? null,
    created_by: r.created_by,
    created_at: r.created_at,
  };
}

export function injectionOf(r: Row): Injection {
  return { id: r.id, node_id: r.node_id, domain: r.domain, kind: r.kind, detail: json(r.detail, {}), applied_at: r.applied_at ?? null, rolled_back_at: r.rolled_back_at ?? null, rollback_note: r.rollback_note ?? null };
}

export function experimentOf(r: Row, injections: Injection[]): Experiment {
  return {
    experiment_id: r.id,
    scenario_id: r.scenario_id ?? null,
    scenario_name: r.scenario_name,
    kind: r.kind,
    injection_type: r.injection_type,
    target_domains: json(r.target_domains, []),
    parameters: json(r.parameters, {}),
    duration_seconds: Number(r.duration_seconds),
    hypothesis: json(r.hypothesis, {} as Experiment['hypothesis']),
    status: r.status,
    phase: r.phase,
    deviated: bool(r.deviated),
    reason: r.reason ?? null,
    steady_state: { before: json<Measurement | null>(r.before, null), during: json<Measurement | null>(r.during, null), after: json<Measurement | null>(r.after, null) },
    injections,
    effects: json(r.effects, {}),
    time_to_recover_ms: r.time_to_recover_ms === null || r.time_to_recover_ms === undefined ? null : Number(r.time_to_recover_ms),
    started_at: r.started_at,
    injected_at: r.injected_at ?? null,
    rolled_back_at: r.rolled_back_at ?? null,
    ended_at: r.ended_at ?? null,
    started_by: r.started_by,
    aborted_by: r.aborted_by ?? null,
    tenant_id: r.tenant_id,
  };
}

/** Experiments with their injections, in the order of `rows`. */
export async function withInjections(db: Db, rows: Row[]): Promise<Experiment[]> {
  if (rows.length === 0) return [];
  const inj = await db('chaos_injections').whereIn('experiment_id', rows.map((r) => r.id)).orderBy([{ column: 'node_id' }, { column: 'id' }]);
  const by = new Map<string, Injection[]>();
  for (const i of inj) {
    const list = by.get(i.experiment_id) ?? [];
    list.push(injectionOf(i));
    by.set(i.experiment_id, list);
  }
  return rows.map((r) => experimentOf(r, by.get(r.id) ?? []));
}
