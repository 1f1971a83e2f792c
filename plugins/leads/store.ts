import crypto from 'node:crypto';
import type { Db, Migration } from '../../core/db';

export const STAGES = ['new', 'demo_booked', 'demo_cancelled'] as const;
export type Stage = (typeof STAGES)[number];

export const leadMigrations: Migration[] = [
  {
    name: '001_leads',
    async up(db) {
      await db.schema.createTable('leads', (t) => {
        t.string('id', 36).primary();
        // Stored lower-cased: one lead per address, whatever case a form or a tool sends.
        t.string('email', 254).notNullable().unique();
        t.string('name', 200);
        t.string('company', 200);
        t.text('last_message');
        t.string('source', 32).notNullable();
        t.string('stage', 32).notNullable();
        t.string('demo_at', 32);
        t.integer('submissions').notNullable();
        t.string('created_at', 32).notNullable();
        t.string('updated_at', 32).notNullable();
        t.index(['created_at']);
      });
      await db.schema.createTable('contact_submissions', (t) => {
        t.string('id', 36).primary();
        t.string('address', 64).notNullable();
        t.string('lead_id', 36);
        // honeypot: the hidden field was filled; kept so the rate limit counts bots too.
        t.string('verdict', 16).notNullable();
        t.string('created_at', 32).notNullable();
        t.index(['address', 'created_at']);
      });
      await db.schema.createTable('webhook_deliveries', (t) => {
        t.string('id', 200).primary();
        t.string('source', 32).notNullable();
        t.string('event', 64).notNullable();
        t.string('action', 64).notNullable();
        t.string('lead_id', 36);
        t.string('received_at', 32).notNullable();
      });
    },
  },
  {
    // A `workflow.run` delivery names the execution it started.
    name: '002_delivery_execution',
    async up(db) {
      await db.schema.alterTable('webhook_deliveries', (t) => {
        t.string('execution_id', 36);
      });
    },
  },
];

export interface LeadInput {
  email: string;
  name?: string | null;
  company?: string | null;
  message?: string | null;
  source: string;
  stage?: Stage;
  demo_at?: string | null;
}

/** Creates the lead of an address or updates the one that exists (deduplicated by e-mail). */
export async function upsertLead(db: Db, input: LeadInput, now: string): Promise<{ id: string; created: boolean }> {
  const email = input.email.trim().toLowerCase();
  return db.transaction(async (trx) => {
    const found = await trx('leads').where({ email }).first();
    if (found) {
      const patch: Record<string, unknown> = { updated_at: now, submissions: Number(found.submissions) + 1 };
      if (input.name) patch.name = input.name;
      if (input.company) patch.company = input.company;
      if (input.message) patch.last_message = input.message;
      if (input.stage) patch.stage = input.stage;
      if (input.demo_at !== undefined) patch.demo_at = input.demo_at;
      await trx('leads').where({ id: found.id }).update(patch);
      return { id: found.id as string, created: false };
    }
    const id = crypto.randomUUID();
    await trx('leads').insert({
      id,
      email,
      name: input.name ?? null,
      company: input.company ?? null,
      last_message: input.message ?? null,
      source: input.source,
      stage: input.stage ?? 'new',
      demo_at: input.demo_at ?? null,
      submissions: 1,
      created_at: now,
      updated_at: now,
    });
    return { id, created: true };
  });
}
