import fs from 'node:fs';
import https from 'node:https';
import * as acme from 'acme-client';
import type { Config } from '../../../core/config';
import { nowIso, type Db } from '../../../core/db';
import { NotConfigured } from '../errors';
import type { Issued } from './ca';
import type { Sealer } from './sealing';

const ACCOUNT_ROW = 'acme_account';

/**
 * Certificates from an ACME CA (RFC 8555) with HTTP-01 challenges. The key authorizations are
 * kept in the database, so whichever host the CA reaches answers
 * GET /.well-known/acme-challenge/{token} (served by this plugin on the service's HTTP port).
 */
export class AcmeIssuer {
  constructor(
    private readonly db: Db,
    private readonly sealer: Sealer,
    private readonly config: Config,
  ) {}

  get configured(): boolean {
    return !!this.config.automation.acme.directoryUrl;
  }

  private async accountKey(): Promise<string> {
    let row = await this.db('automation_secrets').where({ name: ACCOUNT_ROW }).first();
    if (!row) {
      const key = (await acme.crypto.createPrivateEcdsaKey('P-256')).toString();
      await this.db('automation_secrets').insert({ name: ACCOUNT_ROW, public_pem: null, sealed: this.sealer.seal(key), created_at: nowIso() }).onConflict('name').ignore();
      row = await this.db('automation_secrets').where({ name: ACCOUNT_ROW }).first();
    }
    return this.sealer.unseal(row.sealed as string);
  }

  async issue(names: string[]): Promise<Issued> {
    const cfg = this.config.automation.acme;
    if (!cfg.directoryUrl) throw new NotConfigured('automation.acme.directoryUrl');
    // A private ACME server (pebble, step-ca) serves its directory with a certificate of its own CA.
    if (cfg.caFile) acme.axios.defaults.httpsAgent = new https.Agent({ ca: fs.readFileSync(cfg.caFile) });
    const client = new acme.Client({ directoryUrl: cfg.directoryUrl, accountKey: await this.accountKey(), backoffAttempts: 20, backoffMin: 200, backoffMax: 2000 });
    const [key, csr] = await acme.crypto.createCsr({ commonName: names[0], altNames: names }, await acme.crypto.createPrivateEcdsaKey('P-256'));
    const order = client.auto({
      csr,
      email: cfg.email,
      termsOfServiceAgreed: true,
      challengePriority: ['http-01'],
      // The CA checks the challenge itself; acme-client's own pre-check would go to port 80.
      skipChallengeVerification: true,
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
        await this.db('automation_acme_challenges').insert({ token: challenge.token, key_authorization: keyAuthorization, created_at: nowIso() }).onConflict('token').merge();
      },
      challengeRemoveFn: async (_authz, challenge) => {
        await this.db('automation_acme_challenges').where({ token: challenge.token }).delete();
      },
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the ACME order did not finish within ${cfg.timeoutMs} ms`)), cfg.timeoutMs);
    });
    const chain = await Promise.race([order, timeout]).finally(() => clearTimeout(timer));
    const [leaf, ...rest] = acme.crypto.splitPemChain(chain);
    return { certPem: `${leaf!.trim()}\n`, chainPem: rest.map((c) => `${c.trim()}\n`).join(''), keyPem: key.toString() };
  }

  async challenge(token: string): Promise<string | null> {
    const row = await this.db('automation_acme_challenges').where({ token }).first('key_authorization');
    return (row?.key_authorization as string | undefined) ?? null;
  }
}
