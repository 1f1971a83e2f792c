import crypto from 'node:crypto';
import { expect } from 'chai';
import { Revocations } from '../../core/auth/revocations';
import type { TokenClaims } from '../../core/auth/service';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

eachDatabase('revocations shared through the database', (db) => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ db, plugins: [] });
  });
  after(() => t.stop());

  const claims = (jti: string): TokenClaims => ({ sub: 'u1', tenant: 'platform', role: 'viewer', jti, iat: 1, exp: Math.floor(Date.now() / 1000) + 3600, iss: 'x', aud: 'y' });
  const sync = (r: Revocations) => (r as unknown as { sync(initial: boolean): Promise<void> }).sync(false);
  const row = (jti: string, createdAt: Date) => ({ id: jti, user_id: 'u1', tenant_id: 'platform', not_before: null, expires_at: Math.floor(Date.now() / 1000) + 3600, created_at: createdAt.toISOString() });

  it("picks up another host's revocation even when it lands behind the newest one seen", async () => {
    const reader = new Revocations(t.host.services.db, 60_000);
    await reader.start();
    try {
      const newest = crypto.randomUUID();
      await t.host.services.db('revoked_tokens').insert(row(newest, new Date()));
      await sync(reader);
      expect(reader.refusal(claims(newest))).to.deep.equal({ valid: false, reason: 'revoked' });
      // Written by a host whose clock is 10 s behind (or whose commit was slow).
      const late = crypto.randomUUID();
      await t.host.services.db('revoked_tokens').insert(row(late, new Date(Date.now() - 10_000)));
      await sync(reader);
      expect(reader.refusal(claims(late))).to.deep.equal({ valid: false, reason: 'revoked' });
      expect(reader.refusal(claims(crypto.randomUUID()))).to.equal(null);
    } finally {
      reader.stop();
    }
  });
});
