import crypto from 'node:crypto';
import { Conflict, NotFound } from '../../core/errors';
import type { Db, Migration } from '../../core/db';
import type { EventBus } from '../../core/events';
import { roleAtLeast, type Caller } from '../../core/roles';

export const STATES = ['open', 'mitigated', 'resolved', 'closed'] as const;
export type State = (typeof STATES)[number];
export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const ACTIVE: State[] = ['open', 'mitigated'];

/** Which states each change may start from; anything else answers 409. */
export const RULES = {
  mitigated: ['open', 'mitigated'],
  resolved: ['open', 'mitigated'],
  closed: ['resolved'],
} as const satisfies Record<string, readonly State[]>;

export type EntryKind = 'opened' | 'mitigated' | 'mitigation_failed' | 'mitigation_applied_late' | 'resolved' | 'closed' | 'recurred' | 'cause_cleared';

export interface Entry {
  at: string;
  kind: EntryKind;
  from_state: State | null;
  to_state: State | null;
  source: 'manual' | 'automated';
  actor: string;
  detail: Record<string, unknown>;
}

export interface Incident {
  id: string;
  tenant_id: string | null;
  title: string;
  description: string | null;
  severity: Severity;
  state: State;
  domain: string | null;
  kernel_id: string | null;
  node_id: string | null;
  source: 'manual' | 'automated';
  cause: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export const incidentMigrations: Migration[] = [
  {
    name: '001_incidents',
    async up(db) {
      await db.schema.createTable('incidents', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64);
        t.string('title', 200).notNullable();
        t.text('description');
        t.string('severity', 16).notNullable();
        t.string('state', 16).notNullable();
        t.string('domain', 64);
        t.string('kernel_id', 64);
        t.string('node_id', 128);
        t.string('source', 16).notNullable();
        t.string('cause', 200);
        // Set to `cause` while the incident is active, null after: the unique index makes
        // "one incident per cause while it is open" hold even across hosts.
        t.string('active_cause', 200).unique();
        t.string('created_by', 128).notNullable();
        t.string('created_at', 32).notNullable();
        t.string('updated_at', 32).notNullable();
        t.index(['tenant_id', 'state']);
        t.index(['created_at']);
      });
      await db.schema.createTable('incident_timeline', (t) => {
        t.increments('n').primary();
        t.string('incident_id', 36).notNullable().references('incidents.id');
        t.string('tenant_id', 64);
        t.string('at', 32).notNullable();
        t.string('kind', 32).notNullable();
        t.string('from_state', 16);
        t.string('to_state', 16);
        t.string('source', 16).notNullable();
        t.string('actor', 128).notNullable();
        t.text('detail').notNullable();
        t.index(['incident_id']);
        t.index(['at']);
      });
    },
  },
];

/** Who sees what: a tenant's own incidents; platform-wide ones (tenant_id null) need operator or above. */
export function visible(caller: Caller): { tenant_id: string; platform: boolean } {
  return { tenant_id: caller.tenantId, platform: roleAtLeast(caller.role, 'operator') };
}

type Scope = ReturnType<typeof visible>;
type Q = ReturnType<Db>;

export function scoped(q: Q, scope: Scope, column = 'tenant_id'): Q {
  return q.where((w) => (scope.platform ? w.where(column, scope.tenant_id).orWhereNull(column) : w.where(column, scope.tenant_id)));
}

function toEntry(r: Record<string, unknown>): Entry {
  return {
    at: r.at as string,
    kind: r.kind as EntryKind,
    from_state: (r.from_state as State | null) ?? null,
    to_state: (r.to_state as State | null) ?? null,
    source: r.source as Entry['source'],
    actor: r.actor as string,
    detail: JSON.parse(r.detail as string) as Record<string, unknown>,
  };
}

function toIncident(r: Record<string, unknown>): Incident {
  const { active_cause: _drop, ...rest } = r;
  return rest as unknown as Incident;
}

export interface NewIncident {
  tenant_id: string | null;
  title: string;
  description?: string | null;
  severity: Severity;
  domain?: string | null;
  kernel_id?: string | null;
  node_id?: string | null;
  source: 'manual' | 'automated';
  cause?: string | null;
  actor: string;
  detail?: Record<string, unknown>;
}

/** The incident store: rows, their timeline, and an `incident` bus event for every change. */
export class IncidentStore {
  /** Last timestamp handed out, kept strictly increasing: lists and timelines sort by time, and ties would sort by random ids. */
  private last = 0;

  constructor(
    readonly db: Db,
    private readonly events: EventBus,
  ) {}

  private stamp(): string {
    this.last = Math.max(Date.now(), this.last + 1);
    return new Date(this.last).toISOString();
  }

  /** Opens an incident; with a `cause` returns null when one for that cause is still active. */
  async open(n: NewIncident): Promise<Incident | null> {
    const now = this.stamp();
    const row = {
      id: crypto.randomUUID(),
      tenant_id: n.tenant_id,
      title: n.title,
      description: n.description ?? null,
      severity: n.severity,
      state: 'open' as State,
      domain: n.domain ?? null,
      kernel_id: n.kernel_id ?? null,
      node_id: n.node_id ?? null,
      source: n.source,
      cause: n.cause ?? null,
      active_cause: n.cause ?? null,
      created_by: n.actor,
      created_at: now,
      updated_at: now,
    };
    const entry: Entry = { at: now, kind: 'opened', from_state: null, to_state: 'open', source: n.source, actor: n.actor, detail: n.detail ?? {} };
    try {
      await this.db.transaction(async (trx) => {
        await trx('incidents').insert(row);
        await trx('incident_timeline').insert(this.entryRow(row.id, row.tenant_id, entry));
      });
    } catch (err) {
      if (n.cause && (await this.activeByCause(n.cause))) return null;
      throw err;
    }
    const incident = toIncident(row);
    this.publish(incident, entry);
    return incident;
  }

  activeByCause(cause: string): Promise<Incident | undefined> {
    return this.db('incidents').where({ active_cause: cause }).first().then((r) => (r ? toIncident(r) : undefined));
  }

  /** One incident the scope may see (NotFound otherwise), with its timeline. */
  async get(id: string, scope: Scope | null): Promise<Incident & { timeline: Entry[] }> {
    const q = this.db('incidents').where({ id });
    const row = await (scope ? scoped(q, scope) : q).first();
    if (!row) throw new NotFound(`No incident ${id}`);
    return { ...toIncident(row), timeline: await this.timeline(id) };
  }

  async timeline(id: string): Promise<Entry[]> {
    const rows = await this.db('incident_timeline').where({ incident_id: id }).orderBy('n', 'asc');
    return rows.map(toEntry);
  }

  /**
   * Moves an incident to `to` if its state allows it (RULES). The update only matches the
   * state that was read (optimistic), so two concurrent changes cannot both win, and the
   * timeline's from_state is always the real previous state.
   */
  async transition(
    id: string,
    scope: Scope,
    to: keyof typeof RULES,
    by: { source: Entry['source']; actor: string; detail?: Record<string, unknown> },
  ): Promise<Incident & { timeline: Entry[] }> {
    const allowed: readonly State[] = RULES[to];
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.get(id, scope);
      if (!allowed.includes(current.state)) {
        throw new Conflict(`Incident is ${current.state}; it can become ${to} only when ${allowed.join(' or ')}`);
      }
      const now = this.stamp();
      const entry: Entry = { at: now, kind: to, from_state: current.state, to_state: to, source: by.source, actor: by.actor, detail: by.detail ?? {} };
      const changed = await this.db.transaction(async (trx) => {
        const patch: Record<string, unknown> = { state: to, updated_at: now };
        if (to === 'resolved' || to === 'closed') patch.active_cause = null;
        const n = await trx('incidents').where({ id, state: current.state }).update(patch);
        if (n) await trx('incident_timeline').insert(this.entryRow(id, current.tenant_id, entry));
        return n > 0;
      });
      if (!changed) continue;
      const after = await this.get(id, scope);
      this.publish(after, entry);
      return after;
    }
    throw new Conflict('Incident is changing concurrently; try again');
  }

  /** A timeline entry that does not change the state (failed mitigation, recurrence, cleared cause). */
  async note(incident: Incident, entry: Omit<Entry, 'at' | 'from_state' | 'to_state'>): Promise<Entry> {
    const full: Entry = { ...entry, at: this.stamp(), from_state: incident.state, to_state: incident.state };
    await this.db.transaction(async (trx) => {
      await trx('incidents').where({ id: incident.id }).update({ updated_at: full.at });
      await trx('incident_timeline').insert(this.entryRow(incident.id, incident.tenant_id, full));
    });
    this.publish({ ...incident, updated_at: full.at }, full);
    return full;
  }

  private entryRow(incidentId: string, tenantId: string | null, e: Entry) {
    return { incident_id: incidentId, tenant_id: tenantId, ...e, detail: JSON.stringify(e.detail) };
  }

  private publish(incident: Incident, entry: Entry): void {
    this.events.publish('incident', { change: entry.kind, tenant_id: incident.tenant_id, incident: { ...incident }, entry: { ...entry } });
  }
}
