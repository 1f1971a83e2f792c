import { expect } from 'chai';
import type { TestHost } from '../helpers/host';
import { startMeshHost } from '../core/mesh-helpers';
import { eventually } from '../helpers/eventually';

describe('kernels plugin (/kernels, /api/kernels)', () => {
  let t: TestHost;
  let viewer: string;
  let member: string;
  before(async () => {
    t = await startMeshHost(['analytics', 'trading', 'llm'], { kernels: { trading: { nodes: 2 } } });
    viewer = (await t.userToken('viewer')).token;
    member = (await t.userToken('member')).token;
    await eventually(() => t.host.services.mesh.kernels().every((k) => k.health === 'healthy'), 5000, 'healthy kernels');
  });
  after(() => t.stop());

  it('lists the kernel domains, also under /api/kernels, with pages', async () => {
    const r = await t.request('GET', '/kernels/', { token: viewer });
    expect(r.status).to.equal(200);
    expect(r.body.kernels.map((k: any) => k.id)).to.deep.equal(['analytics', 'llm', 'trading']);
    const trading = r.body.kernels[2];
    expect(trading).to.include({ domain: 'trading', state: 'active', health: 'healthy' });
    expect(trading.nodes.map((n: any) => n.id)).to.deep.equal(['trading-1', 'trading-2']);
    expect(trading.tasks).to.include('price_option');
    const api = await t.request('GET', '/api/kernels', { token: viewer });
    expect(api.status).to.equal(200);
    expect(api.body.kernels).to.have.length(3);
    const first = await t.request('GET', '/kernels/?limit=2', { token: viewer });
    const second = await t.request('GET', `/kernels/?limit=2&cursor=${first.body.next_cursor}`, { token: viewer });
    expect(second.body.kernels.map((k: any) => k.id)).to.deep.equal(['trading']);
    expect(second.body.next_cursor).to.equal(null);
    expect((await t.request('GET', '/kernels/?cursor=zzz', { token: viewer })).status).to.equal(422);
    expect((await t.request('GET', '/kernels/', { token: null })).status).to.equal(401);
  });

  it('answers status with counters and ping with a real round trip', async () => {
    await t.request('POST', '/kernels/analytics/tasks/describe', { body: { values: [1] } });
    const s = await t.request('GET', '/kernels/analytics/status', { token: viewer });
    expect(s.status).to.equal(200);
    expect(s.body.stats.tasks_run).to.be.at.least(1);
    expect(s.body.breaker).to.deep.equal({ state: 'closed', isolated: false });
    const p = await t.request('GET', '/kernels/trading/ping', { token: viewer });
    expect(p.body).to.include({ status: 'ok', domain: 'trading', kernel_id: 'trading', health: 'healthy', registered: true });
    expect(p.body.latency_ms).to.be.a('number').above(0);
    expect(p.body.thread_id).to.be.a('number');
    expect((await t.request('GET', '/kernels/nope/ping', { token: viewer })).status).to.equal(404);
    expect((await t.request('GET', '/kernels/nope/status', { token: viewer })).status).to.equal(404);
    const operator = (await t.userToken('operator')).token;
    await t.request('POST', '/ops/kernels/llm/pause', { token: operator });
    const down = await t.request('GET', '/kernels/llm/ping', { token: viewer });
    expect(down.body).to.include({ status: 'unavailable', latency_ms: null });
    expect(down.body.reason).to.match(/no active node/);
    await t.request('POST', '/ops/kernels/llm/resume', { token: operator });
  });

  it('serves the task catalogue with JSON schemas', async () => {
    const r = await t.request('GET', '/kernels/trading/tasks', { token: viewer });
    expect(r.status).to.equal(200);
    const price = r.body.tasks.find((x: any) => x.name === 'price_option');
    expect(price.input_schema.properties.type.enum).to.deep.equal(['call', 'put']);
    expect(price.input_schema.required).to.include('spot');
    expect(price.output_schema.properties.delta.type).to.equal('number');
    expect((await t.request('GET', '/kernels/nope/tasks', { token: viewer })).status).to.equal(404);
  });

  it('runs a task: 200 with the output, 422 bad input, 404 unknown task, member role needed', async () => {
    const ok = await t.request('POST', '/kernels/analytics/tasks/describe', { token: member, body: { values: [1, 2, 3] } });
    expect(ok.status).to.equal(200);
    expect(ok.body).to.include({ domain: 'analytics', task: 'describe' });
    expect(ok.body.output.mean).to.equal(2);
    const bad = await t.request('POST', '/kernels/analytics/tasks/describe', { token: member, body: { values: ['x'] } });
    expect(bad.status).to.equal(422);
    expect(bad.body.detail[0].loc).to.deep.equal(['body', 'values', 0]);
    expect((await t.request('POST', '/kernels/analytics/tasks/nope', { token: member, body: {} })).status).to.equal(404);
    expect((await t.request('POST', '/kernels/analytics/tasks/constructor', { token: member, body: {} })).status).to.equal(404);
    expect((await t.request('POST', '/kernels/nope/tasks/describe', { token: member, body: {} })).status).to.equal(404);
    expect((await t.request('POST', '/kernels/analytics/tasks/describe', { token: viewer, body: { values: [1] } })).status).to.equal(403);
    expect((await t.request('POST', '/kernels/analytics/tasks/describe', { token: null, body: { values: [1] } })).status).to.equal(401);
    expect((await t.request('POST', '/kernels/analytics/tasks/describe', { token: member, raw: '{oops' })).status).to.equal(400);
  });

  it('answers 503 with the reason when the kernel cannot take work', async () => {
    const operator = (await t.userToken('operator')).token;
    expect((await t.request('POST', '/ops/kernels/analytics/pause', { token: operator })).status).to.equal(200);
    const r = await t.request('POST', '/kernels/analytics/tasks/describe', { body: { values: [1] } });
    expect(r.status).to.equal(503);
    expect(r.body.detail).to.match(/kernel "analytics" has no active node \(paused 1/);
    expect(r.headers.get('retry-after')).to.equal('1');
    await t.request('POST', '/ops/kernels/analytics/resume', { token: operator });
  });
});
