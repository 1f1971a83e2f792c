import type { ActionLog } from '../../core/actions';
import type { Amount, Billing } from '../../core/contracts/billing';
import type { PlanFeatures, UsageMeter } from '../../core/contracts/usage';
import type { Config } from '../../core/config';
import type { Db } from '../../core/db';
import type { Mesh } from '../../core/mesh/mesh';
import { monthBounds, monthOf } from './catalogue';
import { Invoicer } from './invoice';
import { createKey, keyView } from './keys';
import { Ledger } from './ledger';
import { PublicRunner } from './marketplace';
import { money } from './money';

/** The monetization plugin's parts, and the Billing service other plugins read. */
export class BillingService implements Billing {
  readonly ledger: Ledger;
  readonly invoicer: Invoicer;
  readonly runner: PublicRunner;

  constructor(
    readonly db: Db,
    readonly config: Config,
    mesh: Mesh,
    readonly usage: UsageMeter,
    readonly features: PlanFeatures,
    readonly now: () => Date,
    actions: ActionLog,
  ) {
    this.ledger = new Ledger(db, now);
    this.invoicer = new Invoicer(db, config, this.ledger, usage, features, now, actions);
    this.runner = new PublicRunner(db, config, mesh, this.ledger, usage, now);
  }

  format(minor: number): Amount {
    return { ...money(minor, this.config.billing.currency, this.config.billing.currencies), minor };
  }

  async createApiKey(k: { tenantId: string; name: string; scopes: Array<'execute' | 'read' | 'write'>; createdBy: string }) {
    const { key, view } = await createKey(this.db, { ...k, ratePerMinute: this.config.billing.defaultKeyRatePerMinute, expiresAt: null, now: this.now() });
    return { id: view.id, key };
  }

  async apiKeyState(tenantId: string, id: string) {
    const row = await this.db('api_keys').where({ id, tenant_id: tenantId }).first();
    return row ? keyView(row, this.now()).state : null;
  }

  async invoiceTotal(tenantId: string, period: string) {
    const inv = await this.invoicer.invoice(tenantId, period);
    const minorOf = (a: { amount: string }) => Math.round(Number(a.amount) * 10 ** (this.config.billing.currencies[inv.currency] ?? 2));
    const planFee = inv.lines.filter((l) => l.kind === 'plan').reduce((a, l) => a + minorOf(l.amount), 0);
    return { ...this.format(minorOf(inv.total)), plan_fee_minor: planFee };
  }

  /** Ledger debits of the tenant's receivable in the window less its refunds, plus the open month's unposted lines. */
  async spend(tenantId: string, from: string, to: string): Promise<Amount> {
    const cur = this.config.billing.currency;
    const rows = await this.db('ledger_entries').where({ tenant_id: tenantId, account: `receivable:${tenantId}`, currency: cur }).andWhere('amount', '>', 0).andWhere('created_at', '>=', from).andWhere('created_at', '<', to).sum({ s: 'amount' });
    const refunds = await this.db('ledger_transactions').where({ tenant_id: tenantId, kind: 'refund', currency: cur }).andWhere('created_at', '>=', from).andWhere('created_at', '<', to).sum({ s: 'amount' });
    let minor = Number(rows[0]?.s ?? 0) - Number(refunds[0]?.s ?? 0);
    const now = this.now();
    const open = monthBounds(monthOf(now));
    if (to > open.start.toISOString() && from < now.toISOString()) {
      const lines = await this.invoicer.lines(tenantId, monthOf(now), now);
      minor += lines.filter((l) => !l.posted_on_use).reduce((a, l) => a + l.minor, 0);
    }
    return this.format(minor);
  }

  async balance(tenantId: string): Promise<Amount> {
    const [r] = await this.ledger.sums({ account: `receivable:${tenantId}`, currency: this.config.billing.currency });
    return this.format(r?.amount ?? 0);
  }
}
