import { expect } from 'chai';
import type { BusEvent } from '../../core/events';
import actionsHistory from '../../plugins/actions-history';
import incidents from '../../plugins/incidents';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';
import { eventually } from '../helpers/eventually';

const MISSING = '00000000-0000-4000-8000-000000000000';

eachDatabase('incidents plugin', (db) => {
  let t: TestHost;
  let op: string; // operator in the platform tenant
  let viewer: string;
  let member: string;
  let acmeOp: string; // operator of another tenant
  let acmeViewer: string;
  before(async () => {
    t = await startHost({ db, plugins: [incidents, actionsHistory] });
    op = (await t.userToken('operator')).token;
    viewer = (await t.userToken('viewer')).token;
    member = (await t.userToken('member')).token;
    acmeOp = (await t.userToken('operator', 'acme')).token;
    acmeViewer = (await t.userToken('viewer', 'acme')).token;
  });
  after(() => t.stop());

  const detect = (body: Record<string, unknown> = {}, token = op) =>
    t.request('POST', '/incidents/detect', { token, body: { title: 'Trading latency high', severity: 'high', domain: 'trading', ...body } });

  describe('POST /incidents/detect', () => {
    it('opens an incident in the caller tenant with an opened entry, an action and an event', async () => {
      const seen: BusEvent[] = [];
      const off = t.host.services.events.subscribe('incident', (e) => seen.push(e));
      const r = await detect({ kernel_id: 'trading', node_id: 'trading-1', description: 'p99 over 2 s' });
      off();
      expect(r.status).to.equal(201);
      expect(r.body).to.include({ state: 'open', severity: 'high', domain: 'trading', kernel_id: 'trading', node_id: 'trading-1', tenant_id: 'platform', source: 'manual' });
      expect(r.body.timeline).to.have.length(1);
      expect(r.body.timeline[0]).to.include({ kind: 'opened', from_state: null, to_state: 'open', source: 'manual' });
      expect(seen).to.have.length(1);
      expect(seen[0].data).to.deep.include({ change: 'opened', tenant_id: 'platform' });
      const h = await t.request('GET', `/ops/actions/history?action=open_incident&target=${r.body.id}`, { token: op });
      expect(h.body.actions).to.have.length(1);
      expect(h.body.actions[0]).to.include({ source: 'manual', target_type: 'incident', result: 'succeeded', tenant_id: 'platform' });
    });

    it('needs operator: 401 without a token, 403 for viewer and member', async () => {
      expect((await detect({}, null as unknown as string)).status).to.equal(401);
      expect((await detect({}, viewer)).status).to.equal(403);
      expect((await detect({}, member)).status).to.equal(403);
    });

    it('answers 422 for bad input and stores nothing', async () => {
      const before = (await t.request('GET', '/incidents/summary', { token: op })).body.total;
      const bad = [
        { severity: 'urgent' },
        { title: '' },
        { domain: 'Trading!' },
        { node_id: 'x'.repeat(200) },
        { description: 7 },
        { domain: 'trading', kernel_id: 'llm' },
        { domain: 'trading', node_id: 'llm-1' },
      ];
      for (const b of bad) {
        const r = await detect(b);
        expect(r.status, JSON.stringify(b)).to.equal(422);
        expect(r.body.detail[0].loc[0]).to.equal('body');
      }
      const missing = await t.request('POST', '/incidents/detect', { token: op, body: { severity: 'low' } });
      expect(missing.body.detail[0]).to.deep.include({ loc: ['body', 'title'], type: 'missing' });
      const derived = await detect({ domain: undefined, kernel_id: 'llm' });
      expect(derived.body).to.include({ domain: 'llm', kernel_id: 'llm' });
      await t.request('POST', `/ops/incidents/${derived.body.id}/resolve`, { token: op });
      expect((await t.request('GET', '/incidents/summary', { token: op })).body.total).to.equal(before + 1);
    });
  });

  describe('GET /ops/incidents/{id} and visibility', () => {
    it('shows an incident with its timeline; 404 for unknown, 422 for a non-uuid, 401 without token', async () => {
      const id = (await detect()).body.id;
      const r = await t.request('GET', `/ops/incidents/${id}`, { token: viewer });
      expect(r.status).to.equal(200);
      expect(r.body.id).to.equal(id);
      expect(r.body.timeline.map((e: { kind: string }) => e.kind)).to.deep.equal(['opened']);
      expect((await t.request('GET', `/ops/incidents/${MISSING}`, { token: viewer })).status).to.equal(404);
      expect((await t.request('GET', '/ops/incidents/nope', { token: viewer })).status).to.equal(422);
      expect((await t.request('GET', `/ops/incidents/${id}`, { token: null })).status).to.equal(401);
    });

    it("scopes tenant incidents to their tenant and platform incidents to operators", async () => {
      const acme = (await detect({ title: 'acme sees errors' }, acmeOp)).body;
      expect(acme.tenant_id).to.equal('acme');
      expect((await t.request('GET', `/ops/incidents/${acme.id}`, { token: acmeViewer })).status).to.equal(200);
      expect((await t.request('GET', `/ops/incidents/${acme.id}`, { token: op })).status).to.equal(404);
      expect((await t.request('POST', `/ops/incidents/${acme.id}/resolve`, { token: op })).status).to.equal(404);
      const platform = await t.host.services.db('incidents').where({ id: acme.id }).update({ tenant_id: null });
      expect(platform).to.equal(1);
      expect((await t.request('GET', `/ops/incidents/${acme.id}`, { token: acmeViewer })).status).to.equal(404);
      expect((await t.request('GET', `/ops/incidents/${acme.id}`, { token: viewer })).status).to.equal(404);
      expect((await t.request('GET', `/ops/incidents/${acme.id}`, { token: acmeOp })).status).to.equal(200);
      expect((await t.request('GET', `/ops/incidents/${acme.id}`, { token: op })).status).to.equal(200);
    });
  });

  describe('state changes', () => {
    it('open -> resolved -> closed, 409 for every other order, a timeline entry each', async () => {
      const id = (await detect()).body.id;
      const closeEarly = await t.request('POST', `/incidents/${id}/close`, { token: op });
      expect(closeEarly.status).to.equal(409);
      expect(closeEarly.body.detail).to.match(/open; it can become closed only when resolved/);
      const seen: BusEvent[] = [];
      const off = t.host.services.events.subscribe('incident', (e) => seen.push(e));
      const resolved = await t.request('POST', `/ops/incidents/${id}/resolve`, { token: op, body: { note: 'latency back to normal' } });
      expect(resolved.status).to.equal(200);
      expect(resolved.body.state).to.equal('resolved');
      expect(resolved.body.timeline[1]).to.deep.include({ kind: 'resolved', from_state: 'open', to_state: 'resolved', detail: { note: 'latency back to normal' } });
      expect((await t.request('POST', `/ops/incidents/${id}/resolve`, { token: op })).status).to.equal(409);
      const mitigateLate = await t.request('POST', `/incidents/${id}/mitigate`, { token: op, body: { action: 'drain_node', target: 'trading-1' } });
      expect(mitigateLate.status).to.equal(409);
      const closed = await t.request('POST', `/incidents/${id}/close`, { token: op });
      expect(closed.status).to.equal(200);
      expect(closed.body.state).to.equal('closed');
      expect(closed.body.timeline.map((e: { kind: string }) => e.kind)).to.deep.equal(['opened', 'resolved', 'closed']);
      expect((await t.request('POST', `/incidents/${id}/close`, { token: op })).status).to.equal(409);
      expect((await t.request('POST', `/ops/incidents/${id}/resolve`, { token: op })).status).to.equal(409);
      off();
      expect(seen.map((e) => e.data.change)).to.deep.equal(['resolved', 'closed']);
      const active = await t.request('GET', '/ops/incidents/active', { token: op });
      expect(active.body.incidents.map((i: { id: string }) => i.id)).not.to.include(id);
      const h = await t.request('GET', `/ops/actions/history?target=${id}`, { token: op });
      expect(h.body.actions.map((a: { action: string }) => a.action)).to.deep.equal(['close_incident', 'resolve_incident', 'open_incident']);
    });

    it('resolve and close: 401, 403 for viewer, 404 unknown, 422 bad id or body', async () => {
      const id = (await detect()).body.id;
      for (const p of [`/ops/incidents/${id}/resolve`, `/incidents/${id}/close`]) {
        expect((await t.request('POST', p, { token: null })).status).to.equal(401);
        expect((await t.request('POST', p, { token: viewer })).status).to.equal(403);
        expect((await t.request('POST', p, { token: op, body: { note: 5 } })).status).to.equal(422);
      }
      expect((await t.request('POST', `/ops/incidents/${MISSING}/resolve`, { token: op })).status).to.equal(404);
      expect((await t.request('POST', `/incidents/${MISSING}/close`, { token: op })).status).to.equal(404);
      expect((await t.request('POST', '/incidents/42/close', { token: op })).status).to.equal(422);
      expect((await t.request('GET', `/ops/incidents/${id}`, { token: op })).body.state).to.equal('open');
    });
  });

  describe('POST /incidents/{id}/mitigate', () => {
    const manual = { source: 'manual' as const, actor: 'test' };

    it('checks body, incident and state first; bad input changes nothing on the mesh', async () => {
      const id = (await detect()).body.id;
      const bad = [{ action: 'reboot_everything', target: 'trading' }, { action: 'drain_node', target: 'trading' }, { action: 'pause_kernel', target: 'Trading-1!' }, { action: 'pause_kernel' }];
      for (const body of bad) {
        const r = await t.request('POST', `/incidents/${id}/mitigate`, { token: op, body });
        expect(r.status, JSON.stringify(body)).to.equal(422);
      }
      expect((await t.request('POST', `/incidents/${id}/mitigate`, { token: null, body: { action: 'pause_kernel', target: 'trading' } })).status).to.equal(401);
      expect((await t.request('POST', `/incidents/${id}/mitigate`, { token: member, body: { action: 'pause_kernel', target: 'trading' } })).status).to.equal(403);
      expect((await t.request('POST', `/incidents/${MISSING}/mitigate`, { token: op, body: { action: 'pause_kernel', target: 'trading' } })).status).to.equal(404);
      expect(t.host.services.mesh.kernel('trading').state).to.equal('active');
      const after = (await t.request('GET', `/ops/incidents/${id}`, { token: op })).body;
      expect(after.state).to.equal('open');
      expect(after.timeline).to.have.length(1);
    });

    it('drains a real node and restarts another, with the incident as the cause of the mesh actions', async () => {
      const mesh = t.host.services.mesh;
      const id = (await detect()).body.id;
      const r = await t.request('POST', `/incidents/${id}/mitigate`, { token: op, body: { action: 'drain_node', target: 'llm-1', note: 'take it out' } });
      expect(r.status).to.equal(200);
      expect(r.body.state).to.equal('mitigated');
      expect(r.body.timeline[1]).to.deep.include({ kind: 'mitigated', from_state: 'open', to_state: 'mitigated' });
      expect(r.body.timeline[1].detail).to.deep.include({ action: 'drain_node', target: 'llm-1', note: 'take it out' });
      expect(r.body.timeline[1].detail.result).to.include({ node_id: 'llm-1', state: 'draining' });
      expect(mesh.node('llm-1').state).to.equal('draining');
      const drained = await t.host.services.actions.list({ limit: 5, action: 'drain_node', target_id: 'llm-1' });
      expect(drained.actions[0]).to.include({ source: 'manual', cause: id, result: 'succeeded' });

      const threadsBefore = mesh.node('analytics-1').live_threads.map((x) => x.thread_id);
      const again = await t.request('POST', `/incidents/${id}/mitigate`, { token: op, body: { action: 'restart_node', target: 'analytics-1' } });
      expect(again.status).to.equal(200);
      expect(mesh.node('analytics-1').state).to.equal('active');
      expect(again.body.timeline.map((e: { kind: string }) => e.kind)).to.deep.equal(['opened', 'mitigated', 'mitigated']);
      const steps = await t.host.services.actions.list({ limit: 3, target_id: 'analytics-1' });
      expect(steps.actions.map((a) => [a.action, a.cause])).to.deep.equal([['resume_node', id], ['complete_drain', id], ['drain_node', id]]);
      const h = await t.request('GET', `/ops/actions/history?action=mitigate_incident&target=${id}`, { token: op });
      expect(h.body.actions.map((a: { detail: { action: string } }) => a.detail.action)).to.deep.equal(['restart_node', 'drain_node']);
      await eventually(() => mesh.node('analytics-1').live_threads.length > 0, 5000, 'fresh threads');
      expect(mesh.node('analytics-1').live_threads.map((x) => x.thread_id)).to.not.deep.equal(threadsBefore);
      await mesh.abortDrain('llm-1', manual);
    });

    it('records a mitigation the mesh carried out even when the incident was resolved meanwhile', async () => {
      const mesh = t.host.services.mesh;
      const id = (await detect()).body.id;
      const original = mesh.pauseKernel.bind(mesh);
      // The incident is resolved while the mesh is acting.
      (mesh as { pauseKernel: typeof mesh.pauseKernel }).pauseKernel = async (...args) => {
        const r = await original(...args);
        expect((await t.request('POST', `/ops/incidents/${id}/resolve`, { token: op, body: {} })).status).to.equal(200);
        return r;
      };
      try {
        const r = await t.request('POST', `/incidents/${id}/mitigate`, { token: op, body: { action: 'pause_kernel', target: 'trading' } });
        expect(r.status).to.equal(409);
        expect(r.body.detail).to.match(/the mitigation was carried out and is in the timeline/);
        expect(mesh.kernel('trading').state).to.equal('paused');
        const after = (await t.request('GET', `/ops/incidents/${id}`, { token: op })).body;
        expect(after.state).to.equal('resolved');
        expect(after.timeline.map((e: { kind: string }) => e.kind)).to.deep.equal(['opened', 'resolved', 'mitigation_applied_late']);
        expect(after.timeline[2].detail).to.deep.include({ action: 'pause_kernel', target: 'trading' });
      } finally {
        (mesh as { pauseKernel: typeof mesh.pauseKernel }).pauseKernel = original;
        await mesh.resumeKernel('trading', manual);
      }
    });

    it("passes the mesh's refusal on (409, 404), records it, and keeps the state", async () => {
      const mesh = t.host.services.mesh;
      await mesh.pauseKernel('trading', manual);
      try {
        const id = (await detect()).body.id;
        const r = await t.request('POST', `/incidents/${id}/mitigate`, { token: op, body: { action: 'pause_kernel', target: 'trading' } });
        expect(r.status).to.equal(409);
        expect(r.body.detail).to.match(/No node of kernel trading can pause/);
        const after = (await t.request('GET', `/ops/incidents/${id}`, { token: op })).body;
        expect(after.state).to.equal('open');
        expect(after.timeline[1]).to.deep.include({ kind: 'mitigation_failed', from_state: 'open', to_state: 'open' });
        expect(after.timeline[1].detail).to.deep.include({ action: 'pause_kernel', status: 409 });
        const h = await t.request('GET', `/ops/actions/history?action=mitigate_incident&target=${id}`, { token: op });
        expect(h.body.actions[0].result).to.equal('refused');
        const unknown = await t.request('POST', `/incidents/${id}/mitigate`, { token: op, body: { action: 'drain_node', target: 'trading-9' } });
        expect(unknown.status).to.equal(404);
        expect(unknown.body.detail).to.match(/Unknown node "trading-9"/);
        expect((await t.request('GET', `/ops/incidents/${id}`, { token: op })).body.state).to.equal('open');
      } finally {
        await mesh.resumeKernel('trading', manual);
      }
    });
  });

  describe('GET /ops/incidents/active', () => {
    it('lists open and mitigated incidents newest first, filters and pages; 401, 422', async () => {
      const a = (await detect({ title: 'pg-a', severity: 'critical', domain: 'llm' })).body.id;
      const b = (await detect({ title: 'pg-b', severity: 'critical', domain: 'llm' })).body.id;
      const c = (await detect({ title: 'pg-c', severity: 'critical', domain: 'llm' })).body.id;
      await t.request('POST', `/ops/incidents/${b}/resolve`, { token: op });
      const first = await t.request('GET', '/ops/incidents/active?severity=critical&domain=llm&limit=1', { token: viewer });
      expect(first.status).to.equal(200);
      expect(first.body.incidents.map((i: { id: string }) => i.id)).to.deep.equal([c]);
      const second = await t.request('GET', `/ops/incidents/active?severity=critical&domain=llm&limit=1&cursor=${first.body.next_cursor}`, { token: viewer });
      expect(second.body.incidents.map((i: { id: string }) => i.id)).to.deep.equal([a]);
      expect(second.body.next_cursor).to.equal(null);
      expect((await t.request('GET', '/ops/incidents/active', { token: null })).status).to.equal(401);
      expect((await t.request('GET', '/ops/incidents/active?limit=0', { token: viewer })).status).to.equal(422);
      expect((await t.request('GET', '/ops/incidents/active?severity=huge', { token: viewer })).status).to.equal(422);
      expect((await t.request('GET', '/ops/incidents/active?cursor=zzz', { token: viewer })).status).to.equal(422);
      const acme = await t.request('GET', '/ops/incidents/active', { token: acmeViewer });
      expect(acme.body.incidents.every((i: { tenant_id: string }) => i.tenant_id === 'acme')).to.equal(true);
    });
  });

  describe('GET /incidents/summary and /incidents/analytics', () => {
    it('counts by state, severity and domain, scoped to what the caller sees', async () => {
      const s = await t.request('GET', '/incidents/summary', { token: acmeViewer });
      expect(s.status).to.equal(200);
      const rows = await t.host.services.db('incidents').where({ tenant_id: 'acme' });
      expect(s.body.total).to.equal(rows.length);
      expect(s.body.by_state.open).to.equal(rows.filter((r) => r.state === 'open').length);
      expect(Object.keys(s.body.by_severity)).to.deep.equal(['low', 'medium', 'high', 'critical']);
      const all = await t.request('GET', '/incidents/summary', { token: op });
      const visible = await t.host.services.db('incidents').where((w) => w.where('tenant_id', 'platform').orWhereNull('tenant_id'));
      expect(all.body.total).to.equal(visible.length);
      expect(all.body.by_domain.llm).to.equal(visible.filter((r) => r.domain === 'llm').length);
      expect(all.body.active).to.equal(visible.filter((r) => r.state === 'open' || r.state === 'mitigated').length);
      expect((await t.request('GET', '/incidents/summary', { token: null })).status).to.equal(401);
    });

    it('computes MTTA and MTTR from the timelines, and counts per bucket', async () => {
      const t0 = Date.parse('2026-01-05T10:00:00.000Z');
      const at = (s: number) => new Date(t0 + s * 1000).toISOString();
      const tok = (await t.userToken('operator', 'analytics-tenant')).token;
      const x = (await detect({ title: 'x' }, tok)).body.id;
      const y = (await detect({ title: 'y' }, tok)).body.id;
      await detect({ title: 'z, never touched' }, tok);
      await t.request('POST', `/incidents/${x}/mitigate`, { token: tok, body: { action: 'drain_node', target: 'trading-1' } });
      await t.host.services.mesh.abortDrain('trading-1', { source: 'manual', actor: 'test' });
      await t.request('POST', `/ops/incidents/${x}/resolve`, { token: tok });
      await t.request('POST', `/ops/incidents/${y}/resolve`, { token: tok });
      await t.request('POST', `/incidents/${y}/close`, { token: tok });
      // Give the timelines known times: x acked at +60 s, resolved at +600 s; y resolved at +120 s (a day later).
      const dbh = t.host.services.db;
      const set = async (id: string, times: number[]) => {
        const entries = await dbh('incident_timeline').where({ incident_id: id }).orderBy('n');
        for (let i = 0; i < entries.length; i++) await dbh('incident_timeline').where({ n: entries[i].n }).update({ at: at(times[i]) });
        await dbh('incidents').where({ id }).update({ created_at: at(times[0]) });
      };
      await set(x, [0, 60, 600]);
      await set(y, [86_400, 86_520, 86_580]);
      const z = (await dbh('incidents').where({ tenant_id: 'analytics-tenant', title: 'z, never touched' }).first()).id;
      await set(z, [3600]);
      const r = await t.request('GET', `/incidents/analytics?since=${at(0)}&until=${at(2 * 86_400)}&bucket=day`, { token: tok });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ incidents: 3, acknowledged: 2, resolved: 2, mtta_seconds: (60 + 120) / 2, mttr_seconds: (600 + 120) / 2, bucket: 'day' });
      expect(r.body.series).to.deep.equal([
        { start: '2026-01-05T00:00:00.000Z', opened: 2, resolved: 1, closed: 0 },
        { start: '2026-01-06T00:00:00.000Z', opened: 1, resolved: 1, closed: 1 },
        { start: '2026-01-07T00:00:00.000Z', opened: 0, resolved: 0, closed: 0 },
      ]);
      const hourly = await t.request('GET', `/incidents/analytics?since=${at(0)}&until=${at(7200)}&bucket=hour`, { token: tok });
      expect(hourly.body.series.map((s: { opened: number }) => s.opened)).to.deep.equal([1, 1]);
      expect(hourly.body.mttr_seconds).to.equal(600);
      const empty = await t.request('GET', `/incidents/analytics?since=${at(-86_400)}&until=${at(-1)}`, { token: tok });
      expect(empty.body).to.include({ incidents: 0, mtta_seconds: null, mttr_seconds: null });
    });

    it('analytics: 401, 422 for bad times, reversed window or too many buckets', async () => {
      expect((await t.request('GET', '/incidents/analytics', { token: null })).status).to.equal(401);
      const ok = await t.request('GET', '/incidents/analytics', { token: viewer });
      expect(ok.status).to.equal(200);
      expect(ok.body.series).to.have.length.within(7, 8);
      expect((await t.request('GET', '/incidents/analytics?since=yesterday', { token: viewer })).status).to.equal(422);
      expect((await t.request('GET', '/incidents/analytics?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z', { token: viewer })).status).to.equal(422);
      expect((await t.request('GET', '/incidents/analytics?since=2020-01-01T00:00:00Z&until=2026-01-01T00:00:00Z&bucket=hour', { token: viewer })).status).to.equal(422);
      expect((await t.request('GET', '/incidents/analytics?bucket=week', { token: viewer })).status).to.equal(422);
    });
  });
});
