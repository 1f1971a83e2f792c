import crypto from 'node:crypto';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from './config';
import { nowIso, type Db, type Migration } from './db';
import type { Logger } from './logger';

export interface OutgoingMail {
  tenantId: string;
  to: string;
  subject: string;
  text: string;
}

/**
 * The outbox. Older databases have it from the migration that is now `auth/003_auth_tokens`
 * (it was core's): it is made only where missing.
 */
export const mailMigrations: Migration[] = [
  {
    name: '005_mail_outbox',
    async up(db) {
      if (await db.schema.hasTable('mail_outbox')) return;
      await db.schema.createTable('mail_outbox', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('to_address', 320).notNullable();
        t.string('subject', 200).notNullable();
        t.text('body').notNullable();
        /** stored (no SMTP configured), sending, sent or failed. */
        t.string('status', 16).notNullable();
        t.text('error');
        t.string('created_at', 32).notNullable();
        t.string('sent_at', 32);
        t.index(['tenant_id', 'created_at']);
      });
    },
  },
];

/**
 * Every message is written to the `mail_outbox` table first; when SMTP is configured it is
 * then sent with nodemailer and its row says whether that worked.
 */
export class Mailer {
  private readonly transport: Transporter | null;

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly log: Logger,
  ) {
    this.transport = config.mail.smtpUrl ? nodemailer.createTransport(config.mail.smtpUrl) : null;
  }

  get smtp(): boolean {
    return this.transport !== null;
  }

  async send(mail: OutgoingMail): Promise<{ id: string; status: string }> {
    const id = crypto.randomUUID();
    await this.db('mail_outbox').insert({
      id,
      tenant_id: mail.tenantId,
      to_address: mail.to,
      subject: mail.subject,
      body: mail.text,
      status: this.transport ? 'sending' : 'stored',
      error: null,
      created_at: nowIso(),
      sent_at: null,
    });
    if (!this.transport) return { id, status: 'stored' };
    try {
      await this.transport.sendMail({ from: this.config.mail.from, to: mail.to, subject: mail.subject, text: mail.text });
      await this.db('mail_outbox').where({ id }).update({ status: 'sent', sent_at: nowIso() });
      return { id, status: 'sent' };
    } catch (err) {
      const message = (err as Error).message.slice(0, 500);
      this.log.warn({ mailId: id, err: message }, 'sending mail failed');
      await this.db('mail_outbox').where({ id }).update({ status: 'failed', error: message });
      return { id, status: 'failed' };
    }
  }

  close(): void {
    this.transport?.close();
  }
}
