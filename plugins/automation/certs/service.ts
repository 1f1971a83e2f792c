import crypto from 'node:crypto';
import type { ActionLog } from '../../../core/actions';
import type { Config } from '../../../core/config';
import { nowIso, type Db } from '../../../core/db';
import type { EventBus } from '../../../core/events';
import { NotFound } from '../../../core/errors';
import type { Logger } from '../../../core/logger';
import type { Caller } from '../../../core/roles';
import { AcmeIssuer } from './acme';
import { LocalCa, type Issued } from './ca';
import { Sealer } from './sealing';

export interface CertRow {
  id: string;
  tenant_id: string;
  names: string;
  issuer_kind: 'local' | 'acme';
  state: 'issuing' | 'active' | 'failed';
  subject: string | null;
  issuer: string | null;
  serial: string | null;
  not_before: string | null;
  not_after: string | null;
  fingerprint: string | null;
  cert_pem: string | null;
  chain_pem: string | null;
  key_sealed: string | null;
  renewals: number;
  renewed_at: string | null;
  error: string | null;
  idempotency_key?: string | null;
  created_at: string;
  updated_at: string;
}

const DAY = 86400_000;

/** What the API shows of a certificate: never its key. */
export function certView(r: CertRow, now: Date) {
  const left = r.not_after ? (Date.parse(r.not_after) - now.getTime()) / DAY : null;
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    names: JSON.parse(r.names) as string[],
    issuer_kind: r.issuer_kind,
    state: r.state,
    subject: r.subject,
    subject_alt_names: r.cert_pem ? sans(new crypto.X509Certificate(r.cert_pem)) : [],
    issuer: r.issuer,
    serial: r.serial,
    not_before: r.not_before,
    not_after: r.not_after,
    days_left: left === null ? null : Math.floor(left * 100) / 100,
    fingerprint_sha256: r.fingerprint,
    certificate_pem: r.cert_pem,
    chain_pem: r.chain_pem,
    renewals: r.renewals,
    renewed_at: r.renewed_at,
    error: r.error,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function sans(c: crypto.X509Certificate): string[] {
  return (c.subjectAltName ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

/** Issues, stores and renews certificates (local CA by default, ACME when configured). */
export class Certificates {
  readonly sealer: Sealer;
  readonly ca: LocalCa;
  readonly acme: AcmeIssuer;
  /** Called with a renewed certificate (the HTTPS listener reloads it). */
  readonly renewedListeners: Array<(row: CertRow) => void> = [];

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly actions: ActionLog,
    private readonly events: EventBus,
    private readonly log: Logger,
    private readonly now: () => Date,
  ) {
    this.sealer = new Sealer(config);
    this.ca = new LocalCa(db, this.sealer, config);
    this.acme = new AcmeIssuer(db, this.sealer, config);
  }

  private issueWith(kind: 'local' | 'acme', names: string[]): Promise<Issued> {
    return kind === 'acme' ? this.acme.issue(names) : this.ca.issue(names, this.config.automation.certificates.validityDays);
  }

  private fields(issued: Issued) {
    const c = new crypto.X509Certificate(issued.certPem);
    return {
      subject: c.subject,
      issuer: c.issuer,
      serial: c.serialNumber,
      not_before: new Date(c.validFrom).toISOString(),
      not_after: new Date(c.validTo).toISOString(),
      fingerprint: c.fingerprint256,
      cert_pem: issued.certPem,
      chain_pem: issued.chainPem,
      key_sealed: this.sealer.seal(issued.keyPem),
    };
  }

  async get(tenantId: string | null, id: string): Promise<CertRow> {
    const q = this.db<CertRow>('automation_certificates').where({ id });
    if (tenantId) q.andWhere({ tenant_id: tenantId });
    const row = await q.first();
    if (!row) throw new NotFound('Certificate not found');
    return row;
  }

  /** Issues a certificate; a CA that refuses leaves a `failed` record with the reason (and the call answers 502). */
  async provision(caller: Caller, names: string[], issuer: 'local' | 'acme', idempotencyKey: string | null = null): Promise<CertRow> {
    if (idempotencyKey) {
      const seen = await this.db<CertRow>('automation_certificates').where({ tenant_id: caller.tenantId, idempotency_key: idempotencyKey }).first();
      if (seen) return seen;
    }
    const id = crypto.randomUUID();
    const at = nowIso();
    try {
      await this.db('automation_certificates').insert({ id, tenant_id: caller.tenantId, names: JSON.stringify(names), issuer_kind: issuer, state: 'issuing', renewals: 0, idempotency_key: idempotencyKey, created_at: at, updated_at: at });
    } catch (err) {
      // The same key twice at once: the unique index lets one through; the other answers its record.
      const seen = idempotencyKey ? await this.db<CertRow>('automation_certificates').where({ tenant_id: caller.tenantId, idempotency_key: idempotencyKey }).first() : undefined;
      if (seen) return seen;
      throw err;
    }
    try {
      const issued = await this.issueWith(issuer, names);
      await this.db('automation_certificates').where({ id }).update({ ...this.fields(issued), state: 'active', updated_at: nowIso() });
      await this.record(caller.id, 'provision_certificate', id, caller.tenantId, 'succeeded', { names, issuer });
    } catch (err) {
      await this.db('automation_certificates').where({ id }).update({ state: 'failed', error: (err as Error).message, updated_at: nowIso() });
      await this.record(caller.id, 'provision_certificate', id, caller.tenantId, 'failed', { names, issuer, error: (err as Error).message });
      throw err;
    }
    return this.get(null, id);
  }

  /** A new key and certificate for the same names from the same issuer; the record keeps its id. */
  async renew(row: CertRow, actor: { source: 'manual' | 'automated'; id: string }): Promise<CertRow> {
    const names = JSON.parse(row.names) as string[];
    try {
      const issued = await this.issueWith(row.issuer_kind, names);
      await this.db('automation_certificates').where({ id: row.id }).update({ ...this.fields(issued), state: 'active', error: null, renewals: row.renewals + 1, renewed_at: nowIso(), updated_at: nowIso() });
    } catch (err) {
      await this.db('automation_certificates').where({ id: row.id }).update({ error: `renewal failed: ${(err as Error).message}`, updated_at: nowIso() });
      await this.record(actor.id, 'renew_certificate', row.id, row.tenant_id, 'failed', { error: (err as Error).message }, actor.source);
      throw err;
    }
    const fresh = await this.get(null, row.id);
    await this.record(actor.id, 'renew_certificate', row.id, row.tenant_id, 'succeeded', { serial: fresh.serial, not_after: fresh.not_after }, actor.source);
    this.events.publish('certificate_renewed', { id: row.id, tenant_id: row.tenant_id, not_after: fresh.not_after });
    for (const l of this.renewedListeners) l(fresh);
    return fresh;
  }

  /** Active certificates ending within `days` (of the tenant, or all with null). */
  async expiring(tenantId: string | null, days: number): Promise<CertRow[]> {
    const until = new Date(this.now().getTime() + days * DAY).toISOString();
    const q = this.db<CertRow>('automation_certificates').where({ state: 'active' }).andWhere('not_after', '<=', until).orderBy('not_after');
    if (tenantId) q.andWhere({ tenant_id: tenantId });
    return q;
  }

  /** The scheduler's renewal job: every certificate inside its renew window. */
  async renewDue(): Promise<{ renewed: string[]; failed: Array<{ id: string; error: string }> }> {
    const due = await this.expiring(null, this.config.automation.certificates.renewBeforeDays);
    const out = { renewed: [] as string[], failed: [] as Array<{ id: string; error: string }> };
    for (const row of due) {
      try {
        await this.renew(row, { source: 'automated', id: 'automation.renewal' });
        out.renewed.push(row.id);
      } catch (err) {
        this.log.warn({ cert: row.id, err: (err as Error).message }, 'certificate renewal failed');
        out.failed.push({ id: row.id, error: (err as Error).message });
      }
    }
    return out;
  }

  keyPem(row: CertRow): string {
    return this.sealer.unseal(row.key_sealed!);
  }

  private record(actor: string, action: string, id: string, tenantId: string, result: 'succeeded' | 'failed', detail: Record<string, unknown>, source: 'manual' | 'automated' = 'manual') {
    return this.actions.record({ source, actor, action, target_type: 'certificate', target_id: id, result, tenant_id: tenantId, detail });
  }
}
