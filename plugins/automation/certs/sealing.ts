import crypto from 'node:crypto';
import { loadSecret } from '../../../core/auth/service';
import type { Config } from '../../../core/config';

/**
 * Private keys at rest: AES-256-GCM under a key derived (HKDF-SHA256) from
 * automation.keyEncryptionKey, or from the JWT secret when that is unset. Hosts sharing a
 * database share the JWT secret (their tokens must verify everywhere), so they can all unseal.
 */
export class Sealer {
  private readonly key: Buffer;

  constructor(config: Config) {
    const base = config.automation.keyEncryptionKey ? Buffer.from(config.automation.keyEncryptionKey, 'utf8') : loadSecret(config).export();
    this.key = Buffer.from(crypto.hkdfSync('sha256', base, Buffer.alloc(0), 'platform-control automation keys v1', 32));
  }

  seal(plain: string): string {
    const iv = crypto.randomBytes(12);
    const c = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return ['v1', iv.toString('base64'), c.getAuthTag().toString('base64'), body.toString('base64')].join('.');
  }

  unseal(sealed: string): string {
    const [v, iv, tag, body] = sealed.split('.');
    if (v !== 'v1' || !iv || !tag || !body) throw new Error('not a sealed value');
    const d = crypto.createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    d.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([d.update(Buffer.from(body, 'base64')), d.final()]).toString('utf8');
  }
}
