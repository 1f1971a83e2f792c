import crypto from 'node:crypto';
import { expect } from 'chai';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';
import { llm, telemetryPlugins } from '../helpers/telemetry';

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');
const INGEST = '/observability/v1/ingest';

eachDatabase('observability: ingest', (db) => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ db, plugins: telemetryPlugins, config: { server: { bodyLimit: 64 * 1024 }, telemetry: { maxBatch: 50 } } });
  });
  after(() => t.stop());

  it('stores a single event of every kind and answers 202 with its generated id', async () => {
    const bodies: Record<string, unknown> = {
      'llm-call': llm(),
      kernel: { kernel: 'trading', task: 'price', duration_ms: 3, node: 'trading-1' },
      policy: { policy_id: 'pii-guard', decision: 'redact', duration_ms: 1 },
      outcome: { name: 'ticket_resolved', result: 'success', value: 12.5 },
      evaluation: { metric: 'faithfulness', score: 0.92, passed: true, evaluator: 'judge-1' },
    };
    for (const [kind, body] of Object.entries(bodies)) {
      const r = await t.request('POST', `${INGEST}/${kind}`, { body });
      expect(r.status, kind).to.equal(202);
      expect(r.body).to.include({ accepted: 1, duplicates: 0 });
      expect(r.body.rejected).to.deep.equal([]);
      expect(r.body.ids[0]).to.match(/^[0-9a-f-]{36}$/);
      const back = await t.request('GET', `/observability/v1/query/events?type=${kind}`);
      expect(back.body.events.map((e: { id: string }) => e.id)).to.include(r.body.ids[0]);
    }
  });

  it('treats null optional fields as left out', async () => {
    const r = await t.request('POST', `${INGEST}/llm-call`, { body: llm({ id: 'nulls-1', operation: null, response_model: null, cost_usd: null, parent_span_id: null }) });
    expect(r.status).to.equal(202);
    const back = await t.request('GET', '/observability/v1/query/events?type=llm-call&model=gpt-4o');
    const e = back.body.events.find((x: { id: string }) => x.id === 'nulls-1');
    expect(e).to.include({ operation: 'chat', request_model: 'gpt-4o' });
    expect(e).to.not.have.property('cost_usd');
    expect((await t.request('POST', `${INGEST}/llm-call`, { body: llm({ provider: null }) })).status).to.equal(422);
  });

  it('stores a repeated id once, also inside one batch (retries are safe)', async () => {
    const id = `retry-${hex(4)}`;
    const first = await t.request('POST', `${INGEST}/llm-call`, { body: llm({ id }) });
    expect(first.body).to.include({ accepted: 1, duplicates: 0 });
    const again = await t.request('POST', `${INGEST}/llm-call`, { body: { events: [llm({ id }), llm({ id }), llm({ id: `${id}-b` }), llm({ id: `${id}-b` })] } });
    expect(again.status).to.equal(202);
    expect(again.body).to.include({ accepted: 1, duplicates: 3 });
    const stored = await t.host.services.db('telemetry_events').where('id', 'like', `${id}%`).count({ n: '*' }).first();
    expect(Number(stored!.n)).to.equal(2);
  });

  it('stores the valid events of a batch and reports the others by index', async () => {
    const r = await t.request('POST', `${INGEST}/llm-call`, {
      body: { events: [llm(), { provider: 'openai' }, llm({ input_tokens: -1 }), llm({ bogus: 1 }), llm({ trace_id: 'xyz' }), 'text', llm()] },
    });
    expect(r.status).to.equal(202);
    expect(r.body.accepted).to.equal(2);
    expect(r.body.rejected.map((x: { index: number }) => x.index)).to.deep.equal([1, 2, 3, 4, 5]);
    const locs = r.body.rejected.map((x: { detail: Array<{ loc: unknown[] }> }) => x.detail.map((d) => d.loc.join('.')));
    expect(locs[0]).to.include.members(['body.events.1.request_model', 'body.events.1.duration_ms']);
    expect(locs[1]).to.deep.equal(['body.events.2.input_tokens']);
    expect(r.body.rejected[2].detail[0]).to.include({ type: 'extra_forbidden' });
    expect(locs[3]).to.deep.equal(['body.events.4.trace_id']);
    expect(r.body.ids[1]).to.equal(null);
    expect(r.body.ids[6]).to.be.a('string');
  });

  it('answers 422 for a bad single event or a batch with nothing valid, storing nothing', async () => {
    const before = await t.host.services.db('telemetry_events').count({ n: '*' }).first();
    const single = await t.request('POST', `${INGEST}/policy`, { body: { policy_id: 'p' } });
    expect(single.status).to.equal(422);
    expect(single.body.detail[0].loc).to.deep.equal(['body', 'decision']);
    const batch = await t.request('POST', `${INGEST}/outcome`, { body: { events: [{ name: 'x', result: 'maybe' }] } });
    expect(batch.status).to.equal(422);
    expect(batch.body.detail[0].loc).to.deep.equal(['body', 'events', 0, 'result']);
    for (const body of [{ events: [] }, { events: 'no' }, { events: [llm()], extra: 1 }]) {
      expect((await t.request('POST', `${INGEST}/llm-call`, { body })).status).to.equal(422);
    }
    const orphan = await t.request('POST', `${INGEST}/kernel`, { body: { kernel: 'k', task: 't', duration_ms: 1, span_id: hex(8) } });
    expect(orphan.status).to.equal(422);
    const badTime = await t.request('POST', `${INGEST}/kernel`, { body: { kernel: 'k', task: 't', duration_ms: 1, timestamp: '2026-01-01 10:00' } });
    expect(badTime.status).to.equal(422);
    const after = await t.host.services.db('telemetry_events').count({ n: '*' }).first();
    expect(Number(after!.n)).to.equal(Number(before!.n));
  });

  it('answers 413 for a body over the limit and a batch over maxBatch', async () => {
    const big = await t.request('POST', `${INGEST}/llm-call`, { body: { events: Array.from({ length: 40 }, () => llm({ attributes: { pad: 'x'.repeat(3000) } })) } });
    expect(big.status).to.equal(413);
    const many = await t.request('POST', `${INGEST}/kernel`, { body: { events: Array.from({ length: 51 }, () => ({ kernel: 'k', task: 't', duration_ms: 1 })) } });
    expect(many.status).to.equal(413);
    expect(many.body.detail).to.match(/at most 50/);
  });

  it('needs credentials and the member role to ingest, on every kind', async () => {
    const viewer = await t.userToken('viewer');
    for (const kind of ['llm-call', 'kernel', 'policy', 'outcome', 'evaluation']) {
      expect((await t.request('POST', `${INGEST}/${kind}`, { body: llm(), token: null })).status, kind).to.equal(401);
      expect((await t.request('POST', `${INGEST}/${kind}`, { body: llm(), token: viewer.token })).status, kind).to.equal(403);
      // No kind accepts an empty event, and none accepts another kind's fields.
      expect((await t.request('POST', `${INGEST}/${kind}`, { body: {} })).status, kind).to.equal(422);
      if (kind !== 'llm-call') expect((await t.request('POST', `${INGEST}/${kind}`, { body: llm() })).status, kind).to.equal(422);
    }
    const scores = await t.request('POST', `${INGEST}/evaluation`, { body: { events: [{ metric: 'm', score: 'high' }, { metric: 'm', score: 1, passed: 'yes' }, { metric: 'm', score: 0.5 }] } });
    expect(scores.body.rejected.map((r: { detail: Array<{ loc: unknown[] }> }) => r.detail[0].loc.join('.'))).to.deep.equal(['body.events.0.score', 'body.events.1.passed']);
    const member = await t.userToken('member');
    expect((await t.request('POST', `${INGEST}/llm-call`, { body: llm(), token: member.token })).status).to.equal(202);
  });
});

eachDatabase('observability: ingest keys', (db) => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ db, plugins: telemetryPlugins });
  });
  after(() => t.stop());

  it('creates a key shown once, lists it without the secret, ingests under its tenant, and revokes it', async () => {
    const op = await t.userToken('operator', 'acme');
    const created = await t.request('POST', '/observability/v1/ingest-keys', { body: { name: 'etl' }, token: op.token });
    expect(created.status).to.equal(201);
    expect(created.body.key).to.match(/^pcik_/);
    expect(created.body.tenant_id).to.equal('acme');
    const stored = await t.host.services.db('ingest_keys').where({ id: created.body.id }).first();
    expect(stored.key_hash).to.not.equal(created.body.key);
    expect(JSON.stringify(stored)).to.not.include(created.body.key);

    const list = await t.request('GET', '/observability/v1/ingest-keys', { token: op.token });
    expect(list.status).to.equal(200);
    expect(list.body.keys.map((k: { id: string }) => k.id)).to.deep.equal([created.body.id]);
    expect(list.body.keys[0]).to.not.have.property('key');

    const key = created.body.key as string;
    const viaHeader = await t.request('POST', `${INGEST}/llm-call`, { body: llm({ id: 'from-key' }), token: null, headers: { 'x-ingest-key': key } });
    expect(viaHeader.status).to.equal(202);
    const viaBearer = await t.request('POST', `${INGEST}/kernel`, { body: { kernel: 'k', task: 't', duration_ms: 2 }, token: key });
    expect(viaBearer.status).to.equal(202);
    const row = await t.host.services.db('telemetry_events').where({ id: 'from-key' }).first();
    expect(row.tenant_id).to.equal('acme');
    // A key may only ingest.
    expect((await t.request('GET', '/observability/v1/query/events', { token: key })).status).to.equal(403);
    expect((await t.request('POST', `${INGEST}/llm-call`, { body: llm(), token: 'pcik_not-a-key' })).status).to.equal(401);

    const audit = await t.request('GET', '/ops/observability/audit?action=create_ingest_key', { token: op.token });
    expect(audit.body.entries.map((e: { target_id: string }) => e.target_id)).to.include(created.body.id);

    const revoked = await t.request('DELETE', `/observability/v1/ingest-keys/${created.body.id}`, { token: op.token });
    expect(revoked.status).to.equal(200);
    expect(revoked.body.revoked_at).to.be.a('string');
    expect((await t.request('POST', `${INGEST}/llm-call`, { body: llm(), token: key })).status).to.equal(401);
    expect((await t.request('DELETE', `/observability/v1/ingest-keys/${created.body.id}`, { token: op.token })).status).to.equal(409);
  });

  it('keeps keys inside their tenant and checks roles and input', async () => {
    const a = await t.userToken('operator', 'tenant-a');
    const b = await t.userToken('operator', 'tenant-b');
    const created = await t.request('POST', '/observability/v1/ingest-keys', { body: { name: 'a' }, token: a.token });
    expect((await t.request('DELETE', `/observability/v1/ingest-keys/${created.body.id}`, { token: b.token })).status).to.equal(404);
    expect((await t.request('GET', '/observability/v1/ingest-keys?tenant_id=tenant-a', { token: b.token })).status).to.equal(403);
    expect((await t.request('POST', '/observability/v1/ingest-keys', { body: { name: 'x', tenant_id: 'tenant-a' }, token: b.token })).status).to.equal(403);
    // Admins act for any tenant.
    const forB = await t.request('POST', '/observability/v1/ingest-keys', { body: { name: 'by-admin', tenant_id: 'tenant-b' } });
    expect(forB.status).to.equal(201);
    expect(forB.body.tenant_id).to.equal('tenant-b');
    expect((await t.request('POST', '/observability/v1/ingest-keys', { body: { name: 'x', tenant_id: 'nope' } })).status).to.equal(404);
    const member = await t.userToken('member', 'tenant-a');
    expect((await t.request('POST', '/observability/v1/ingest-keys', { body: { name: 'm' }, token: member.token })).status).to.equal(403);
    expect((await t.request('GET', '/observability/v1/ingest-keys', { token: null })).status).to.equal(401);
    expect((await t.request('POST', '/observability/v1/ingest-keys', { body: { name: '' } })).status).to.equal(422);
    expect((await t.request('DELETE', '/observability/v1/ingest-keys/not-a-uuid')).status).to.equal(422);
    expect((await t.request('DELETE', `/observability/v1/ingest-keys/${crypto.randomUUID()}`)).status).to.equal(404);
    const page1 = await t.request('GET', '/observability/v1/ingest-keys?tenant_id=tenant-b&limit=1');
    expect(page1.body.keys).to.have.length(1);
    expect((await t.request('GET', '/observability/v1/ingest-keys?cursor=zz')).status).to.equal(422);
  });
});
