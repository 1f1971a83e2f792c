import { expect } from 'chai';
import authPlugin from '../../plugins/auth';
import { startHost, type TestHost } from '../helpers/host';

// The verifier remembers tokens passport has verified; these prove the memory never lets
// through a token that a fresh verification would refuse.
describe('verified-token cache', () => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ plugins: [authPlugin] });
  });
  after(() => t.stop());

  const me = (token: string) => t.request('GET', '/auth/me', { token });

  it('refuses a remembered token once it is revoked (logout)', async () => {
    const { token } = await t.userToken('viewer');
    expect((await me(token)).status).to.equal(200);
    expect((await me(token)).status).to.equal(200);
    expect((await t.request('POST', '/auth/logout', { token })).status).to.be.oneOf([200, 204]);
    const after = await me(token);
    expect(after.status).to.equal(401);
    expect(after.body.detail).to.match(/revoked/);
    expect((await t.request('GET', `/auth/verify?token=${token}`, { token: null })).body).to.include({ valid: false, reason: 'revoked' });
  });

  it('refuses a remembered token once it has expired', async () => {
    const { userId, tenantId } = await t.userToken('viewer');
    // exp is in whole seconds: a 1 s token signed late in a second can expire before its first
    // use on a busy machine; 3 s leaves it at least 2.
    const { token, exp } = t.host.services.auth.sign({ id: userId, tenantId, role: 'viewer' }, 3);
    expect((await me(token)).status).to.equal(200);
    await new Promise((r) => setTimeout(r, Math.max(0, exp * 1000 - Date.now()) + 50));
    const late = await me(token);
    expect(late.status).to.equal(401);
    expect(late.body.detail).to.match(/expired/);
    expect((await t.request('GET', `/auth/verify?token=${token}`, { token: null })).body).to.include({ valid: false, reason: 'expired' });
  });

  it('does not accept a tampered copy of a remembered token', async () => {
    const { token } = await t.userToken('viewer');
    expect((await me(token)).status).to.equal(200);
    // Not the last character: its low bits are padding, and changing them may not change the signature.
    const at = token.length - 5;
    const tampered = token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1);
    expect((await me(tampered)).status).to.equal(401);
    expect((await t.request('GET', `/auth/verify?token=${tampered}`, { token: null })).body.valid).to.equal(false);
  });
});
