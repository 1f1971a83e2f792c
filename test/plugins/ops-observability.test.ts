import { expect } from 'chai';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';
import { llm, telemetryPlugins } from '../helpers/telemetry';

eachDatabase('ops observability', (db) => {
  let t: TestHost;
  let operator: { token: string; tenantId: string; userId: string };
  before(async () => {
    t = await startHost({ db, plugins: telemetryPlugins });
    operator = await t.userToken('operator', 'initech');
    const member = await t.userToken('member', 'initech');
    const post = (kind: string, body: unknown) => t.request('POST', `/observability/v1/ingest/${kind}`, { body, token: member.token });
    await post('llm-call', { events: [llm(), llm({ status: 'error', error_type: 'timeout', duration_ms: 900 }), llm({ request_model: 'claude', response_model: 'claude', provider: 'anthropic' })] });
    await post('policy', { events: [{ policy_id: 'pii', decision: 'deny' }, { policy_id: 'pii', decision: 'allow' }] });
    await post('outcome', { name: 'sale', result: 'success', value: 99 });
    await post('kernel', { kernel: 'llm', task: 'tokenize', duration_ms: 4 });
    // Actions of two tenants and one platform-wide.
    const actions = t.host.services.actions;
    await actions.record({ source: 'manual', actor: operator.userId, action: 'pause_kernel', target_type: 'kernel', target_id: 'llm', result: 'succeeded', tenant_id: 'initech' });
    await actions.record({ source: 'automated', actor: 'breaker', action: 'isolate_kernel', target_type: 'kernel', target_id: 'trading', result: 'succeeded' });
    await actions.record({ source: 'manual', actor: 'someone', action: 'pause_kernel', target_type: 'kernel', target_id: 'x', result: 'succeeded', tenant_id: 'other-co' });
  });
  after(() => t.stop());

  it('overview: events by type, ingest figures, LLM totals and host telemetry', async () => {
    const r = await t.request('GET', '/ops/observability/overview', { token: operator.token });
    expect(r.status).to.equal(200);
    expect(r.body.events_by_type).to.deep.equal({ 'llm-call': 3, policy: 2, outcome: 1, kernel: 1 });
    expect(r.body.ingest).to.include({ scope: 'tenant', accepted: 7, batches: 4 });
    expect(r.body.llm).to.include({ count: 3, errors: 1 });
    expect(r.body.host.http.requests).to.be.at.least(4);
    expect(r.body.host.kernel_health).to.have.property('status');
    const admin = await t.request('GET', '/ops/observability/overview');
    expect(admin.body.ingest.scope).to.equal('platform');
    expect(admin.body.ingest.accepted).to.equal(7);
    expect(admin.body.events_by_type).to.deep.equal({});
  });

  it('LLM, policy and outcome metrics from the operator side', async () => {
    const llmR = await t.request('GET', '/ops/observability/llm-metrics?group_by=provider', { token: operator.token });
    expect(llmR.status).to.equal(200);
    expect(llmR.body.groups.map((g: { key: { provider: string }; count: number }) => [g.key.provider, g.count])).to.deep.equal([['openai', 2], ['anthropic', 1]]);
    const pol = await t.request('GET', '/ops/observability/policy-metrics', { token: operator.token });
    expect(pol.body.totals).to.deep.equal({ count: 2, by_decision: { allow: 1, deny: 1 } });
    const out = await t.request('GET', '/ops/observability/outcome-metrics', { token: operator.token });
    expect(out.body.groups[0]).to.deep.include({ key: { name: 'sale' }, count: 1, success: 1, success_rate: 1 });
    const asAdmin = await t.request('GET', '/ops/observability/llm-metrics?tenant_id=initech');
    expect(asAdmin.body.totals.count).to.equal(3);
  });

  it('audit: operators see their tenant and platform actions; admins see all', async () => {
    const mine = await t.request('GET', '/ops/observability/audit', { token: operator.token });
    expect(mine.status).to.equal(200);
    expect(mine.body.entries.map((e: { target_id: string }) => e.target_id)).to.have.members(['llm', 'trading']);
    const all = await t.request('GET', '/ops/observability/audit');
    expect(all.body.entries.map((e: { target_id: string }) => e.target_id)).to.include.members(['llm', 'trading', 'x']);
    const filtered = await t.request('GET', '/ops/observability/audit?source=automated', { token: operator.token });
    expect(filtered.body.entries.map((e: { actor: string }) => e.actor)).to.deep.equal(['breaker']);
    const page = await t.request('GET', '/ops/observability/audit?limit=1', { token: operator.token });
    expect(page.body.entries).to.have.length(1);
    const next = await t.request('GET', `/ops/observability/audit?limit=1&cursor=${page.body.next_cursor}`, { token: operator.token });
    expect(next.body.entries).to.have.length(1);
    expect(next.body.entries[0].id).to.not.equal(page.body.entries[0].id);
    const other = await t.request('GET', '/ops/observability/audit?tenant_id=other-co');
    expect(other.body.entries.map((e: { target_id: string }) => e.target_id)).to.have.members(['x', 'trading']);
  });

  it('needs the operator role, and checks input', async () => {
    const member = await t.userToken('member', 'initech');
    for (const p of ['overview', 'llm-metrics', 'policy-metrics', 'outcome-metrics', 'audit']) {
      expect((await t.request('GET', `/ops/observability/${p}`, { token: null })).status, p).to.equal(401);
      expect((await t.request('GET', `/ops/observability/${p}`, { token: member.token })).status, p).to.equal(403);
      expect((await t.request('GET', `/ops/observability/${p}?tenant_id=other-co`, { token: operator.token })).status, p).to.equal(403);
    }
    expect((await t.request('GET', '/ops/observability/llm-metrics?group_by=colour', { token: operator.token })).status).to.equal(422);
    expect((await t.request('GET', '/ops/observability/audit?limit=0', { token: operator.token })).status).to.equal(422);
    expect((await t.request('GET', '/ops/observability/audit?cursor=bad', { token: operator.token })).status).to.equal(422);
    expect((await t.request('GET', '/ops/observability/overview?since=yesterday', { token: operator.token })).status).to.equal(422);
    for (const p of ['overview', 'llm-metrics', 'policy-metrics', 'outcome-metrics']) {
      const reversed = await t.request('GET', `/ops/observability/${p}?since=2024-01-01T00:00:00Z&until=2023-01-01T00:00:00Z`, { token: operator.token });
      expect(reversed.status, p).to.equal(422);
      expect(reversed.body.detail[0].msg).to.equal('since must be before until');
      const future = await t.request('GET', `/ops/observability/${p}?since=2999-01-01T00:00:00Z`, { token: operator.token });
      expect(future.status, p).to.equal(422);
    }
  });
});
