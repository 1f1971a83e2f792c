import { expect } from 'chai';
import auth from '../../../plugins/auth';
import secsuite from '../../../plugins/secsuite';
import security from '../../../plugins/security';
import { eachDatabase, startHost, type TestHost } from '../../helpers/host';

const P = '/secsuite/netsec';

/** A SIP request or response as RFC 3261 text. */
function sip(start: string, h: { callId: string; cseq: string; from?: string; to?: string; ua?: string }): string {
  return [start, 'Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bK776asdhds', `From: <${h.from ?? 'sip:100@198.51.100.7'}>;tag=1928301774`, `To: <${h.to ?? 'sip:200@pbx.example'}>`, `Call-ID: ${h.callId}`, `CSeq: ${h.cseq}`, ...(h.ua ? [`User-Agent: ${h.ua}`] : []), 'Content-Length: 0', '', ''].join('\r\n');
}

// Versioned policy sets, JSON members, booleans and unique names: run on both databases.
eachDatabase('secsuite: network security (/secsuite/netsec)', (dbKind) => {
  let t: TestHost;
  let op: string;
  let member: string;
  let viewer: string;
  let other: string; // operator of another tenant
  const z: Record<string, string> = {};
  before(async () => {
    t = await startHost({ db: dbKind, plugins: [auth, security, secsuite] });
    op = (await t.userToken('operator', 'ns-a')).token;
    member = (await t.userToken('member', 'ns-a')).token;
    viewer = (await t.userToken('viewer', 'ns-a')).token;
    other = (await t.userToken('operator', 'ns-b')).token;
  });
  after(() => t.stop());

  describe('zones', () => {
    it('POST /zones creates zones with members (409 duplicate name, 422 bad CIDR, 403 viewer)', async () => {
      for (const [name, members] of [['web', ['10.0.1.0/24']], ['db', ['10.0.2.0/24', '10.0.9.9']], ['office', ['192.168.0.0/16']]] as const) {
        const r = await t.request('POST', `${P}/zones`, { token: member, body: { name, members } });
        expect(r.status).to.equal(201);
        z[name] = r.body.id;
      }
      const logged = await t.host.services.db('actions').where({ action: 'create_zone', target_id: z.web }).first();
      expect(logged).to.include({ tenant_id: 'ns-a', result: 'succeeded', source: 'manual' });
      expect((await t.request('POST', `${P}/zones`, { token: member, body: { name: 'web' } })).status).to.equal(409);
      expect((await t.request('POST', `${P}/zones`, { token: member, body: { name: 'x', members: ['10.0.0.0/33'] } })).status).to.equal(422);
      expect((await t.request('POST', `${P}/zones`, { token: viewer, body: { name: 'y' } })).status).to.equal(403);
      expect((await t.request('POST', `${P}/zones`, { token: null, body: { name: 'y' } })).status).to.equal(401);
    });

    it('GET /zones and /zones/{id} (404 for another tenant)', async () => {
      const list = await t.request('GET', `${P}/zones`, { token: viewer });
      expect(list.body.zones.map((x: { name: string }) => x.name).sort()).to.deep.equal(['db', 'office', 'web']);
      expect((await t.request('GET', `${P}/zones`, { token: other })).body.zones).to.deep.equal([]);
      const one = await t.request('GET', `${P}/zones/${z.db}`, { token: viewer });
      expect(one.body.members.map((m: { value: string }) => m.value)).to.deep.equal(['10.0.2.0/24', '10.0.9.9']);
      expect((await t.request('GET', `${P}/zones/${z.db}`, { token: other })).status).to.equal(404);
      expect((await t.request('GET', `${P}/zones?limit=0`, { token: viewer })).status).to.equal(422);
    });

    it('PATCH /zones/{id} renames (409 onto an existing name, 422 empty patch, 404 other tenant)', async () => {
      const r = await t.request('PATCH', `${P}/zones/${z.office}`, { token: member, body: { name: 'branch', description: 'branch office' } });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ name: 'branch', description: 'branch office' });
      expect((await t.request('PATCH', `${P}/zones/${z.office}`, { token: member, body: { name: 'web' } })).status).to.equal(409);
      expect((await t.request('PATCH', `${P}/zones/${z.office}`, { token: member, body: {} })).status).to.equal(422);
      expect((await t.request('PATCH', `${P}/zones/${z.office}`, { token: other, body: { name: 'q' } })).status).to.equal(404);
    });

    it('POST and DELETE members (409 existing, 404 absent, 422 bad)', async () => {
      const add = await t.request('POST', `${P}/zones/${z.web}/members`, { token: member, body: { members: ['10.0.3.10', '2001:db8::/64'] } });
      expect(add.status).to.equal(201);
      expect(add.body.members).to.have.length(3);
      expect((await t.request('POST', `${P}/zones/${z.web}/members`, { token: member, body: { members: ['10.0.3.10'] } })).status).to.equal(409);
      expect((await t.request('POST', `${P}/zones/${z.web}/members`, { token: member, body: { members: ['not-an-ip'] } })).status).to.equal(422);
      const del = await t.request('DELETE', `${P}/zones/${z.web}/members/${encodeURIComponent('2001:db8::/64')}`, { token: member });
      expect(del.status).to.equal(200);
      expect(del.body.members.map((m: { value: string }) => m.value)).to.deep.equal(['10.0.1.0/24', '10.0.3.10']);
      expect((await t.request('DELETE', `${P}/zones/${z.web}/members/10.9.9.9`, { token: member })).status).to.equal(404);
      expect((await t.request('DELETE', `${P}/zones/${z.web}/members/bogus`, { token: member })).status).to.equal(422);
      expect((await t.request('DELETE', `${P}/zones/${z.web}/members/10.0.3.10`, { token: other })).status).to.equal(404);
    });
  });

  describe('policies: simulate flows against an applied policy set', () => {
    it('POST /policies adds drafts (422 unknown zone, 409 duplicate name)', async () => {
      const add = (body: Record<string, unknown>) => t.request('POST', `${P}/policies`, { token: member, body });
      expect((await add({ name: 'web-to-db-sql', source_zone: z.web, destination_zone: z.db, ports: ['5432'], action: 'allow', priority: 10 })).status).to.equal(201);
      expect((await add({ name: 'deny-web-db', source_zone: z.web, destination_zone: z.db, ports: ['any'], protocol: 'any', action: 'deny', priority: 20 })).status).to.equal(201);
      expect((await add({ name: 'branch-web', source_zone: z.office, destination_zone: z.web, ports: ['443', '8000-8100'], action: 'allow', priority: 30 })).status).to.equal(201);
      expect((await add({ name: 'bad', source_zone: 'nope', destination_zone: z.web, action: 'allow', priority: 1 })).status).to.equal(422);
      expect((await add({ name: 'bad', source_zone: z.web, destination_zone: z.web, ports: ['70000'], action: 'allow', priority: 1 })).status).to.equal(422);
      expect((await add({ name: 'web-to-db-sql', source_zone: z.web, destination_zone: z.db, action: 'allow', priority: 1 })).status).to.equal(409);
    });

    it('POST /policies/simulate is 409 before any apply', async () => {
      const r = await t.request('POST', `${P}/policies/simulate`, { token: viewer, body: { flows: [{ src_ip: '10.0.1.5', dst_ip: '10.0.2.7', dst_port: 5432, protocol: 'tcp' }] } });
      expect(r.status).to.equal(409);
      expect(r.body.allowed_actions).to.deep.equal(['apply']);
    });

    it('POST /policies/apply activates version 1 with its diff (403 member, 409 when unchanged)', async () => {
      expect((await t.request('POST', `${P}/policies/apply`, { token: member, body: {} })).status).to.equal(403);
      const r = await t.request('POST', `${P}/policies/apply`, { token: op, body: {} });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ version: 1, previous_version: null });
      expect(r.body.diff.added.map((p: { name: string }) => p.name)).to.deep.equal(['web-to-db-sql', 'deny-web-db', 'branch-web']);
      expect((await t.request('POST', `${P}/policies/apply`, { token: op, body: {} })).status).to.equal(409);
      const list = await t.request('GET', `${P}/policies`, { token: viewer });
      expect(list.body.active).to.include({ version: 1, policies: 3 });
      expect(list.body.pending_changes).to.equal(false);
      expect((await t.request('GET', `${P}/policies`, { token: other })).body.policies).to.deep.equal([]);
    });

    it('evaluates flows first-match with the path of evaluation', async () => {
      const r = await t.request('POST', `${P}/policies/simulate`, {
        token: viewer,
        body: { flows: [
          { src_ip: '10.0.1.5', dst_ip: '10.0.2.7', dst_port: 5432, protocol: 'tcp' },
          { src_ip: '10.0.1.5', dst_ip: '10.0.9.9', dst_port: 22, protocol: 'tcp' },
          { src_ip: '192.168.4.4', dst_ip: '10.0.1.80', dst_port: 8080, protocol: 'tcp' },
          { src_ip: '192.168.4.4', dst_ip: '10.0.1.80', dst_port: 8080, protocol: 'udp' },
        ] },
      });
      expect(r.status).to.equal(200);
      const [sql, ssh, web, udp] = r.body.results;
      expect(sql).to.deep.include({ action: 'allow', source_zones: ['web'], destination_zones: ['db'] });
      expect(sql.matched_policy.name).to.equal('web-to-db-sql');
      expect(ssh.action).to.equal('deny');
      expect(ssh.matched_policy.name).to.equal('deny-web-db');
      expect(ssh.path.map((s: { reason: string }) => s.reason)).to.deep.equal(['port not in the policy ports', 'matched']);
      expect(web.action).to.equal('allow');
      expect(web.path).to.have.length(3);
      expect(udp.action).to.equal('deny');
      expect(udp.path.at(-1)).to.include({ name: 'implicit deny' });
      expect((await t.request('POST', `${P}/policies/simulate`, { token: viewer, body: { flows: [{ src_ip: '10.0.1.5/24', dst_ip: 'x', protocol: 'tcp' }] } })).status).to.equal(422);
      expect((await t.request('POST', `${P}/policies/simulate`, { token: viewer, body: { flows: [], version: 1 } })).status).to.equal(422);
      expect((await t.request('POST', `${P}/policies/simulate`, { token: viewer, body: { flows: [sql.flow], version: 7 } })).status).to.equal(404);
      expect((await t.request('POST', `${P}/policies/simulate`, { token: null, body: { flows: [sql.flow] } })).status).to.equal(401);
    });

    it('a new version changes the outcome; rolling back to version 1 restores it', async () => {
      await t.request('POST', `${P}/policies`, { token: member, body: { name: 'web-ssh-db', source_zone: z.web, destination_zone: z.db, ports: ['22'], action: 'allow', priority: 5 } });
      const v2 = await t.request('POST', `${P}/policies/apply`, { token: op, body: {} });
      expect(v2.body).to.include({ version: 2, previous_version: 1 });
      expect(v2.body.diff.added.map((p: { name: string }) => p.name)).to.deep.equal(['web-ssh-db']);
      const flow = { src_ip: '10.0.1.5', dst_ip: '10.0.9.9', dst_port: 22, protocol: 'tcp' };
      expect((await t.request('POST', `${P}/policies/simulate`, { token: viewer, body: { flows: [flow] } })).body.results[0].action).to.equal('allow');
      expect((await t.request('POST', `${P}/policies/simulate`, { token: viewer, body: { flows: [flow], version: 1 } })).body.results[0].action).to.equal('deny');
      const back = await t.request('POST', `${P}/policies/apply`, { token: op, body: { rollback_to: 1 } });
      expect(back.body).to.include({ version: 3, previous_version: 2 });
      expect(back.body.diff.removed.map((p: { name: string }) => p.name)).to.deep.equal(['web-ssh-db']);
      expect((await t.request('POST', `${P}/policies/simulate`, { token: viewer, body: { flows: [flow] } })).body.results[0].action).to.equal('deny');
      expect((await t.request('POST', `${P}/policies/apply`, { token: op, body: { rollback_to: 99 } })).status).to.equal(404);
      expect((await t.request('POST', `${P}/policies/apply`, { token: op, body: { rollback_to: 'x' } })).status).to.equal(422);
    });
  });

  describe('isolation, providers, SIP and healing', () => {
    it('POST /isolate moves a member into quarantine: its flows are denied (409 twice, 404 unknown)', async () => {
      expect((await t.request('POST', `${P}/isolate`, { token: member, body: { address: '10.0.9.9' } })).status).to.equal(403);
      const r = await t.request('POST', `${P}/isolate`, { token: op, body: { address: '10.0.9.9', reason: 'beaconing' } });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ address: '10.0.9.9', quarantine_zone: 'quarantine' });
      expect(r.body.from_zones).to.deep.equal(['db']);
      const sim = await t.request('POST', `${P}/policies/simulate`, { token: viewer, body: { flows: [{ src_ip: '10.0.1.5', dst_ip: '10.0.9.9', dst_port: 5432, protocol: 'tcp' }] } });
      expect(sim.body.results[0]).to.deep.include({ action: 'deny', destination_zones: ['quarantine'] });
      expect(sim.body.results[0].path[0].name).to.equal('quarantine');
      expect((await t.request('POST', `${P}/isolate`, { token: op, body: { address: '10.0.9.9' } })).status).to.equal(404); // no longer in a standard zone
      expect((await t.request('POST', `${P}/isolate`, { token: op, body: { address: '10.200.0.1' } })).status).to.equal(404);
      expect((await t.request('POST', `${P}/isolate`, { token: op, body: { address: '10.0.0.0/8' } })).status).to.equal(422);
      const actions = await t.request('GET', '/security/actions?action=isolate_member', { token: viewer });
      expect(actions.body.actions[0]).to.include({ target_id: '10.0.9.9', result: 'succeeded' });
    });

    it('POST and GET /providers with measured health (409 duplicate, 422 http without url)', async () => {
      const r = await t.request('POST', `${P}/providers`, { token: op, body: { name: 'carrier-one', adapter: 'local', addresses: ['198.51.100.0/24'], carrier: true } });
      expect(r.status).to.equal(201);
      expect(r.body.health.status).to.equal('healthy');
      const dead = await t.request('POST', `${P}/providers`, { token: op, body: { name: 'remote-fw', adapter: 'http', url: 'http://127.0.0.1:9/' } });
      expect(dead.body.health.status).to.equal('unreachable');
      expect((await t.request('POST', `${P}/providers`, { token: op, body: { name: 'carrier-one', adapter: 'local' } })).status).to.equal(409);
      expect((await t.request('POST', `${P}/providers`, { token: op, body: { name: 'h', adapter: 'http' } })).status).to.equal(422);
      expect((await t.request('POST', `${P}/providers`, { token: member, body: { name: 'h', adapter: 'local' } })).status).to.equal(403);
      const list = await t.request('GET', `${P}/providers`, { token: viewer });
      expect(list.body.providers.map((p: { name: string }) => p.name).sort()).to.deep.equal(['carrier-one', 'remote-fw']);
      expect((await t.request('GET', `${P}/providers`, { token: other })).body.providers).to.deep.equal([]);
    });

    it('POST /sip/messages parses RFC 3261 text and detects a scanner and toll fraud (422 for non-SIP)', async () => {
      const now = Date.now();
      const at = (ms: number) => new Date(now - 60_000 + ms).toISOString();
      const messages = [
        { raw: sip('OPTIONS sip:100@pbx.example SIP/2.0', { callId: 'scan-1', cseq: '1 OPTIONS', ua: 'friendly-scanner' }), source_ip: '203.0.113.66', received_at: at(0) },
        ...['+4420794', '+88213', '+2693', '+6753', '+2399'].map((n, i) => ({ raw: sip(`INVITE sip:${n}0000001@pbx.example SIP/2.0`, { callId: `toll-${i}`, cseq: '1 INVITE' }), source_ip: '10.0.1.77', received_at: at(1000 + i) })),
        { raw: sip('INVITE sip:200@pbx.example SIP/2.0', { callId: 'call-1', cseq: '1 INVITE' }), source_ip: '198.51.100.7', received_at: at(2000) },
        { raw: sip('SIP/2.0 100 Trying', { callId: 'call-1', cseq: '1 INVITE' }), source_ip: '10.0.1.1', received_at: at(2050) },
        { raw: sip('SIP/2.0 200 OK', { callId: 'call-1', cseq: '1 INVITE' }), source_ip: '10.0.1.1', received_at: at(2300) },
      ];
      const r = await t.request('POST', `${P}/sip/messages`, { token: member, body: { connection_id: 'trunk-1', messages } });
      expect(r.status).to.equal(201);
      expect(r.body.accepted).to.equal(9);
      expect(r.body.detections.map((d: { category: string; source_ip: string }) => `${d.category} ${d.source_ip}`).sort()).to.deep.equal(['netsec.sip_scan 203.0.113.66', 'netsec.toll_fraud 10.0.1.77']);
      const bad = await t.request('POST', `${P}/sip/messages`, { token: member, body: { connection_id: 'trunk-1', messages: [messages[0], { raw: 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', source_ip: '1.2.3.4' }] } });
      expect(bad.status).to.equal(422);
      expect(bad.body.detail[0].loc).to.deep.equal(['body', 'messages', 1, 'raw']);
      expect((await t.request('POST', `${P}/sip/messages`, { token: viewer, body: { connection_id: 'trunk-1', messages } })).status).to.equal(403);
    });

    it('GET /sbc/health/{connection_id} computes health from response classes and latency (404 unknown)', async () => {
      const r = await t.request('GET', `${P}/sbc/health/trunk-1`, { token: viewer });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ status: 'healthy', requests: 7 });
      expect(r.body.responses).to.include({ '1xx': 1, '2xx': 1 });
      expect(r.body.latency_ms).to.deep.equal({ count: 1, p50: 300, p95: 300 });
      expect(r.body.reasons).to.deep.equal([]);
      expect((await t.request('GET', `${P}/sbc/health/trunk-9`, { token: viewer })).status).to.equal(404);
      expect((await t.request('GET', `${P}/sbc/health/trunk-1`, { token: other })).status).to.equal(404);
      expect((await t.request('GET', `${P}/sbc/health/trunk-1?window_minutes=0`, { token: viewer })).status).to.equal(422);
    });

    it('GET /sbc/carrier-acl derives the allow-list from carrier providers and zones, minus quarantine', async () => {
      await t.request('POST', `${P}/zones`, { token: member, body: { name: 'carriers', kind: 'carrier', members: ['192.0.2.0/28', '10.0.9.9'] } });
      const r = await t.request('GET', `${P}/sbc/carrier-acl`, { token: viewer });
      expect(r.body.entries).to.deep.equal([{ address: '198.51.100.0/24', source: 'provider:carrier-one' }, { address: '192.0.2.0/28', source: 'zone:carriers' }]);
      expect(r.body.excluded.map((x: { address: string }) => x.address)).to.deep.equal(['10.0.9.9']);
      expect((await t.request('GET', `${P}/sbc/carrier-acl`, { token: null })).status).to.equal(401);
    });

    it('GET /threats lists findings and events placed in zones', async () => {
      const r = await t.request('GET', `${P}/threats`, { token: viewer });
      const byAddr = new Map(r.body.threats.map((x: { address: string; kind: string; zones: string[] }) => [`${x.kind} ${x.address}`, x.zones]));
      expect(byAddr.get('finding 10.0.1.77')).to.deep.equal(['web']);
      expect(byAddr.get('finding 203.0.113.66')).to.deep.equal([]);
      expect((await t.request('GET', `${P}/threats`, { token: other })).body.threats).to.deep.equal([]);
    });

    it('POST /healing/evaluate proposes, then applies isolate and block; GET /healing/history', async () => {
      const p = await t.request('POST', `${P}/healing/evaluate`, { token: op, body: {} });
      expect(p.status).to.equal(201);
      const plan = p.body.proposals.map((x: { action: string; address: string; result: string }) => `${x.action} ${x.address} ${x.result}`).sort();
      expect(plan).to.deep.equal(['block 203.0.113.66 proposed', 'isolate 10.0.1.77 proposed']);
      const a = await t.request('POST', `${P}/healing/evaluate`, { token: op, body: { mode: 'apply' } });
      expect(a.body.proposals.every((x: { result: string }) => x.result === 'applied')).to.equal(true);
      const sim = await t.request('POST', `${P}/policies/simulate`, { token: viewer, body: { flows: [{ src_ip: '203.0.113.66', dst_ip: '10.0.1.5', dst_port: 443, protocol: 'tcp' }] } });
      expect(sim.body.results[0].path[0].name).to.equal('quarantine');
      expect((await t.request('POST', `${P}/healing/evaluate`, { token: op, body: { mode: 'apply' } })).body.proposals).to.deep.equal([]);
      expect((await t.request('POST', `${P}/healing/evaluate`, { token: op, body: { mode: 'fix' } })).status).to.equal(422);
      expect((await t.request('POST', `${P}/healing/evaluate`, { token: member, body: {} })).status).to.equal(403);
      const h = await t.request('GET', `${P}/healing/history`, { token: viewer });
      expect(h.body.runs.map((x: { mode: string }) => x.mode)).to.deep.equal(['apply', 'apply', 'propose']);
      expect((await t.request('GET', `${P}/healing/history`, { token: other })).body.runs).to.deep.equal([]);
      expect((await t.request('GET', `${P}/healing/history`, { token: null })).status).to.equal(401);
    });
  });
});
