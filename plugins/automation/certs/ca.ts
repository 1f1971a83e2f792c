import crypto from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { Config } from '../../../core/config';
import { nowIso, type Db } from '../../../core/db';
import type { Sealer } from './sealing';

x509.cryptoProvider.set(crypto.webcrypto as never);

type CryptoKey = crypto.webcrypto.CryptoKey;
type CryptoKeyPair = crypto.webcrypto.CryptoKeyPair;

const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;
const CA_ROW = 'local_ca';

export interface Issued {
  certPem: string;
  chainPem: string;
  keyPem: string;
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

function serial(): string {
  // Positive 16-byte serial (RFC 5280: at most 20 octets, positive).
  const b = crypto.randomBytes(16);
  b[0] &= 0x7f;
  return b.toString('hex');
}

/** Is `name` an IP address (an iPAddress SAN) rather than a DNS name? */
export function isIp(name: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(name) || name.includes(':');
}

/**
 * The local certificate authority: an ECDSA P-256 root made on first use, its key sealed in
 * automation_secrets. It signs server certificates for the names asked.
 */
export class LocalCa {
  private loaded?: Promise<{ cert: x509.X509Certificate; key: CryptoKey }>;

  constructor(
    private readonly db: Db,
    private readonly sealer: Sealer,
    private readonly config: Config,
  ) {}

  private load(): Promise<{ cert: x509.X509Certificate; key: CryptoKey }> {
    this.loaded ??= this.loadOrCreate().catch((err) => {
      this.loaded = undefined;
      throw err;
    });
    return this.loaded;
  }

  private async loadOrCreate() {
    let row = await this.db('automation_secrets').where({ name: CA_ROW }).first();
    if (!row) {
      const keys = (await crypto.webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
      const now = new Date();
      const cert = await x509.X509CertificateGenerator.createSelfSigned({
        serialNumber: serial(),
        name: `CN=${this.config.automation.certificates.caCommonName}`,
        notBefore: new Date(now.getTime() - 60_000),
        notAfter: new Date(now.getTime() + 10 * 365 * 86400_000),
        keys,
        signingAlgorithm: SIGN,
        extensions: [
          new x509.BasicConstraintsExtension(true, 0, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
          await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
        ],
      });
      const keyPem = pem('PRIVATE KEY', await crypto.webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
      // Two hosts making the CA at once: the first insert wins, the other reads it.
      await this.db('automation_secrets').insert({ name: CA_ROW, public_pem: cert.toString('pem'), sealed: this.sealer.seal(keyPem), created_at: nowIso() }).onConflict('name').ignore();
      row = await this.db('automation_secrets').where({ name: CA_ROW }).first();
    }
    const cert = new x509.X509Certificate(row.public_pem as string);
    const keyPem = this.sealer.unseal(row.sealed as string);
    const key = await crypto.webcrypto.subtle.importKey('pkcs8', Buffer.from(keyPem.replace(/-----[^-]+-----|\s/g, ''), 'base64'), EC, false, ['sign']);
    return { cert, key: key as CryptoKey };
  }

  async certificatePem(): Promise<string> {
    return (await this.load()).cert.toString('pem');
  }

  async issue(names: string[], validityDays: number): Promise<Issued> {
    const ca = await this.load();
    const keys = (await crypto.webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
    const now = new Date();
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: `CN=${names[0]}`,
      issuer: ca.cert.subject,
      notBefore: new Date(now.getTime() - 60_000),
      notAfter: new Date(now.getTime() + validityDays * 86400_000),
      publicKey: keys.publicKey,
      signingKey: ca.key,
      signingAlgorithm: SIGN,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension(names.map((n) => ({ type: isIp(n) ? ('ip' as const) : ('dns' as const), value: n }))),
        await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
      ],
    });
    return {
      certPem: `${cert.toString('pem').trim()}\n`,
      chainPem: `${ca.cert.toString('pem').trim()}\n`,
      keyPem: pem('PRIVATE KEY', await crypto.webcrypto.subtle.exportKey('pkcs8', keys.privateKey)),
    };
  }
}
