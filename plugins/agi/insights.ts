import crypto from 'node:crypto';
import type { Db } from '../../core/db';
import { NotFound } from '../../core/errors';
import type { EventBus } from '../../core/events';
import { pageOf } from '../../core/pagination';
import { TenantScope } from '../../core/tenancy';
import type { Agent, Decision, InsightChain, InsightStore, KpiService, Metric, NewChain, Outcome } from '../../core/contracts/insights';

const json = (v: unknown) => JSON.stringify(v);

export function toChain(r: Record<string, any>): InsightChain {
  const body = JSON.parse(r.body);
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    agent_id: r.agent_id,
    topic: r.topic,
    summary: r.summary,
    observations: body.observations,
    inferences: body.inferences,
    recommendation: body.recommendation,
    decision: JSON.parse(r.decision),
    outcome: r.outcome ? JSON.parse(r.outcome) : null,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

function toAgent(r: Record<string, any>): Agent {
  return { ...r, tenant_id: r.tenant_id ?? null, permissions: JSON.parse(r.permissions) } as Agent;
}

/** Chains and agents in the database; a chain belongs to one tenant, platform agents to all. */
export class Insights implements InsightStore {
  constructor(
    private readonly db: Db,
    private readonly events: EventBus,
    private readonly kpis: KpiService,
    private readonly clock: { now(): Date },
  ) {}

  private now() {
    return this.clock.now().toISOString();
  }

  async record(c: NewChain): Promise<InsightChain> {
    const at = this.now();
    const chain: InsightChain = { id: crypto.randomUUID(), ...c, decision: c.decision ?? { state: 'none', by: null, at }, outcome: null, created_at: at, updated_at: at };
    await this.db('agi_chains').insert({
      id: chain.id,
      tenant_id: chain.tenant_id,
      agent_id: chain.agent_id,
      topic: chain.topic,
      summary: chain.summary,
      body: json({ observations: chain.observations, inferences: chain.inferences, recommendation: chain.recommendation }),
      decision: json(chain.decision),
      outcome: null,
      created_at: at,
      updated_at: at,
    });
    this.events.publish('insight_chain', { chain_id: chain.id, tenant_id: chain.tenant_id, agent_id: chain.agent_id, topic: chain.topic, decision: chain.decision.state });
    return chain;
  }

  async decide(id: string, decision: Decision): Promise<void> {
    await this.db('agi_chains').where({ id }).update({ decision: json(decision), updated_at: this.now() });
  }

  async settle(id: string): Promise<Outcome | null> {
    const row = await this.db('agi_chains').where({ id }).first();
    if (!row) return null;
    const chain = toChain(row);
    const p = chain.recommendation?.prediction;
    if (!p) return null;
    const m = await this.kpis.measure(chain.tenant_id, p.metric as Metric, p.params);
    const outcome: Outcome = { metric: p.metric, value: m.value, predicted: p.value, error: m.value === null ? null : m.value - p.value, measured_at: this.now() };
    await this.db('agi_chains').where({ id }).update({ outcome: json(outcome), updated_at: this.now() });
    return outcome;
  }

  async list(tenantId: string, f: { agent_id?: string; topic?: string; limit: number; cursor?: string }) {
    const q = new TenantScope(this.db, tenantId).select('agi_chains');
    if (f.agent_id) q.where('agent_id', f.agent_id);
    if (f.topic) q.where('topic', f.topic);
    const { items, next_cursor } = await pageOf(q, f.limit, f.cursor);
    return { items: items.map(toChain), next_cursor };
  }

  async get(tenantId: string, id: string): Promise<InsightChain> {
    return toChain(await new TenantScope(this.db, tenantId).get('agi_chains', { id }, 'Insight chain'));
  }

  async registerAgent(a: Omit<Agent, 'created_at' | 'updated_at'>): Promise<Agent> {
    const at = this.now();
    const row = { ...a, permissions: json(a.permissions), updated_at: at };
    const n = await this.db('agi_agents').where({ id: a.id }).update(row);
    if (!n) await this.db('agi_agents').insert({ ...row, created_at: at });
    return toAgent(await this.db('agi_agents').where({ id: a.id }).first());
  }

  async agents(tenantId: string): Promise<Agent[]> {
    const rows = await this.db('agi_agents').where((q) => q.where('tenant_id', tenantId).orWhereNull('tenant_id')).orderBy([{ column: 'created_at' }, { column: 'id' }]);
    return rows.map(toAgent);
  }

  async agent(tenantId: string, id: string): Promise<Agent> {
    const row = await this.db('agi_agents').where({ id }).andWhere((q) => q.where('tenant_id', tenantId).orWhereNull('tenant_id')).first();
    if (!row) throw new NotFound('Agent not found');
    return toAgent(row);
  }
}
