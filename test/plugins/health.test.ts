import { expect } from 'chai';
import healthPlugin from '../../plugins/health';
import { eachDatabase, REDIS_URL, startHost, type TestHost } from '../helpers/host';

eachDatabase('health plugin', (db) => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ db, plugins: [healthPlugin] });
  });
  after(() => t.stop());

  it('GET /health/ measures every component (public)', async () => {
    const r = await t.request('GET', '/health/', { token: null });
    expect(r.status).to.equal(200);
    expect(r.body.status).to.equal('healthy');
    expect(Date.parse(r.body.timestamp)).to.be.closeTo(Date.now(), 5000);
    expect(r.body.components).to.deep.include({ database: 'healthy', redis: 'disabled' });
    // Kernels are measured by the mesh: unknown until the first heartbeats arrive.
    expect(r.body.components.kernels).to.be.oneOf(['unknown', 'healthy']);
    expect(r.body.details.database.detail.client).to.equal(db === 'postgres' ? 'pg' : 'sqlite3');
    expect(r.body.details.database.detail.latency_ms).to.be.a('number').and.be.at.least(0);
  });

  it('GET /health/component/{id} answers one component, 404 for an unknown one', async () => {
    const r = await t.request('GET', '/health/component/database', { token: null });
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ component: 'database', status: 'healthy' });
    const missing = await t.request('GET', '/health/component/flux-capacitor', { token: null });
    expect(missing.status).to.equal(404);
    expect(missing.body.detail).to.match(/Unknown component "flux-capacitor"/);
    expect((await t.request('GET', `/health/component/${'x'.repeat(100)}`)).status).to.equal(422);
  });

  it('turns degraded when the database fails', async () => {
    const probe = t.host.services.health;
    probe.register('database', async () => {
      throw new Error('connection refused');
    });
    const r = await t.request('GET', '/health/');
    expect(r.body.status).to.equal('degraded');
    expect(r.body.details.database).to.deep.equal({ status: 'unhealthy', detail: { error: 'connection refused' } });
  });
});

describe('health plugin with Redis', () => {
  it('PINGs Redis when REDIS_URL is set, and reports it down', async () => {
    const t = await startHost({ plugins: [healthPlugin], config: { redis: { url: REDIS_URL } } });
    try {
      const r = await t.request('GET', '/health/component/redis');
      expect(r.body.status).to.equal('healthy');
      expect(r.body.detail.latency_ms).to.be.a('number');
    } finally {
      await t.stop();
    }
    const down = await startHost({ plugins: [healthPlugin], config: { redis: { url: 'redis://127.0.0.1:1' } } });
    try {
      const r = await down.request('GET', '/health/');
      expect(r.body.status).to.equal('degraded');
      expect(r.body.components.redis).to.equal('unhealthy');
    } finally {
      await down.stop();
    }
  });
});
