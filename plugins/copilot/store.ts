import crypto from 'node:crypto';
import type { Db, Migration } from '../../core/db';
import { TenantScope } from '../../core/tenancy';

export const copilotMigrations: Migration[] = [
  {
    name: '001_copilot',
    async up(db) {
      await db.schema.createTable('copilot_conversations', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('user_id', 128).notNullable();
        // A mutating tool call waiting for the user's confirmation: {tool, args}.
        t.text('pending');
        t.string('created_at', 32).notNullable();
        t.string('updated_at', 32).notNullable();
        t.index(['tenant_id', 'created_at']);
      });
      await db.schema.createTable('copilot_messages', (t) => {
        t.string('id', 36).primary();
        t.string('conversation_id', 36).notNullable();
        t.string('tenant_id', 64).notNullable();
        t.integer('seq').notNullable();
        t.string('role', 16).notNullable();
        t.string('user_id', 128);
        t.text('content').notNullable();
        t.text('reasoning_steps');
        t.text('actions_taken');
        t.double('confidence');
        t.string('chain_id', 36);
        t.string('created_at', 32).notNullable();
        t.unique(['conversation_id', 'seq']);
      });
    },
  },
];

export interface Message {
  id: string;
  role: 'user' | 'assistant';
  user_id: string | null;
  content: string;
  reasoning_steps: Array<Record<string, unknown>> | null;
  actions_taken: Array<Record<string, unknown>> | null;
  confidence: number | null;
  chain_id: string | null;
  created_at: string;
}

export interface Pending {
  tool: string;
  args: Record<string, unknown>;
}

export class Conversations {
  constructor(private readonly db: Db) {}

  /** The tenant's conversation (404 otherwise), or a new one. */
  async open(tenantId: string, userId: string, id: string | undefined, at: string) {
    const scope = new TenantScope(this.db, tenantId);
    if (id) {
      const row = await scope.get<{ id: string; pending: string | null }>('copilot_conversations', { id }, 'Conversation');
      return { id: row.id as string, pending: row.pending ? (JSON.parse(row.pending) as Pending) : null };
    }
    const conv = { id: crypto.randomUUID(), user_id: userId, pending: null, created_at: at, updated_at: at };
    await scope.insert('copilot_conversations', conv);
    return { id: conv.id, pending: null };
  }

  async add(tenantId: string, conversationId: string, m: Omit<Message, 'id'>): Promise<void> {
    const row = (await this.db('copilot_messages').where({ conversation_id: conversationId }).max({ n: 'seq' }).first()) as { n: unknown } | undefined;
    await this.db('copilot_messages').insert({
      id: crypto.randomUUID(),
      conversation_id: conversationId,
      tenant_id: tenantId,
      seq: Number(row?.n ?? 0) + 1,
      role: m.role,
      user_id: m.user_id,
      content: m.content,
      reasoning_steps: m.reasoning_steps ? JSON.stringify(m.reasoning_steps) : null,
      actions_taken: m.actions_taken ? JSON.stringify(m.actions_taken) : null,
      confidence: m.confidence,
      chain_id: m.chain_id,
      created_at: m.created_at,
    });
  }

  async setPending(tenantId: string, id: string, pending: Pending | null, at: string): Promise<void> {
    await this.db('copilot_conversations').where({ id, tenant_id: tenantId }).update({ pending: pending ? JSON.stringify(pending) : null, updated_at: at });
  }

  async history(tenantId: string, id: string, limit = 1000) {
    const conv = await new TenantScope(this.db, tenantId).get<Record<string, string>>('copilot_conversations', { id }, 'Conversation');
    const rows = await this.db('copilot_messages').where({ conversation_id: id, tenant_id: tenantId }).orderBy('seq', 'asc').limit(limit);
    const messages: Message[] = rows.map((r) => ({
      id: r.id,
      role: r.role,
      user_id: r.user_id ?? null,
      content: r.content,
      reasoning_steps: r.reasoning_steps ? JSON.parse(r.reasoning_steps) : null,
      actions_taken: r.actions_taken ? JSON.parse(r.actions_taken) : null,
      confidence: r.confidence ?? null,
      chain_id: r.chain_id ?? null,
      created_at: r.created_at,
    }));
    return { id: conv.id as string, tenant_id: conv.tenant_id as string, user_id: conv.user_id as string, pending_confirmation: conv.pending ? (JSON.parse(conv.pending) as Pending) : null, created_at: conv.created_at as string, updated_at: conv.updated_at as string, messages };
  }
}
