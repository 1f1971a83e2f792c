import { expect } from 'chai';
import { core } from '../../../core/services';
import { startHost, type TestHost } from '../../helpers/host';

// The tenant security report reviews every kind of key the platform issues: ingest keys
// (observability) and API keys (monetization) register themselves with security.
describe('security: the tenant report reviews ingest keys and API keys', () => {
  const clock = { at: Date.now(), now() { return new Date(this.at); } };
  let t: TestHost;
  before(async () => {
    t = await startHost({ overrides: [[core.clock, clock]] });
  });
  after(() => t.stop());

  it('lists both kinds once they are older than the rotation period and unused', async () => {
    const ingest = await t.request('POST', '/observability/v1/ingest-keys', { body: { name: 'pipeline-a' } });
    expect(ingest.status).to.equal(201);
    const api = await t.request('POST', '/monetization/api-keys', { body: { name: 'partner-b' } });
    expect(api.status).to.equal(201);
    const fresh = await t.request('GET', '/security/tenant_report/platform');
    expect(fresh.status).to.equal(200);
    expect(fresh.body.exposed_keys.map((k: { name: string }) => k.name)).to.not.include.members(['pipeline-a', 'partner-b']);
    clock.at += 100 * 86_400_000;
    const later = await t.request('GET', '/security/tenant_report/platform');
    const byName = new Map<string, { source: string; reasons: string[] }>(later.body.exposed_keys.map((k: { name: string; source: string; reasons: string[] }) => [k.name, k]));
    expect(byName.get('pipeline-a')?.source).to.equal('ingest_keys');
    expect(byName.get('partner-b')?.source).to.equal('api_keys');
    expect(byName.get('pipeline-a')?.reasons).to.include('older than 90 days');
    expect(byName.get('partner-b')?.reasons).to.include('unused for 30 days');
  });
});
