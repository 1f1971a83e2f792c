import { expect } from 'chai';
import auth from '../../../plugins/auth';
import secsuite from '../../../plugins/secsuite';
import security from '../../../plugins/security';
import { startHost, type TestHost } from '../../helpers/host';

const P = '/secsuite/cloudsec';

describe('secsuite: cloud security (/secsuite/cloudsec)', () => {
  let t: TestHost;
  let op: string;
  let member: string;
  let viewer: string;
  let other: string; // operator of another tenant
  const ids: Record<string, string> = {};
  before(async () => {
    t = await startHost({ plugins: [auth, security, secsuite] });
    op = (await t.userToken('operator', 'cs-a')).token;
    member = (await t.userToken('member', 'cs-a')).token;
    viewer = (await t.userToken('viewer', 'cs-a')).token;
    other = (await t.userToken('operator', 'cs-b')).token;
  });
  after(() => t.stop());

  const rule = (body: Record<string, unknown>, token = member) => t.request('POST', `${P}/inetacc/firewall-rules`, { token, body: { ports: ['443'], ...body } });

  describe('stored rules and policies', () => {
    it('POST /inetacc/firewall-rules stores a rule and reports permissive ones to the security service', async () => {
      const a = await rule({ name: 'office-web', order: 10, action: 'allow', sources: ['10.0.0.0/8'], destinations: ['0.0.0.0/0'] });
      expect(a.status).to.equal(201);
      expect(a.body.issues).to.deep.equal([]);
      ids.office = a.body.id;
      const b = await rule({ name: 'branch-web', order: 20, action: 'allow', sources: ['10.1.0.0/16'], destinations: ['0.0.0.0/0'] });
      expect(b.body.issues.map((i: { kind: string }) => i.kind)).to.deep.equal(['shadowed']);
      const c = await rule({ name: 'anything', order: 30, action: 'allow', sources: ['any'], destinations: ['0.0.0.0/0'], ports: ['any'], protocol: 'any' });
      expect(c.body.issues.map((i: { kind: string }) => i.kind)).to.deep.equal(['any_any', 'wide_ports']);
      ids.any = c.body.id;
      const d = await rule({ name: 'partners', order: 5, action: 'allow', sources: ['::/0'], destinations: ['2001:db8::/32'], ports: ['1-5000'] });
      expect(d.body.issues.map((i: { kind: string }) => i.kind)).to.deep.equal(['open_source', 'wide_ports']);
      const ev = await t.request('GET', '/security/events?category=cloudsec.permissive_rule', { token: viewer });
      expect(ev.body.events).to.have.length(3);
      expect((await rule({ name: 'office-web', order: 1, action: 'allow', sources: ['10.0.0.0/8'], destinations: ['any'] })).status).to.equal(409);
      expect((await rule({ name: 'bad', order: 1, action: 'allow', sources: ['10.0.0.0/40'], destinations: ['any'] })).status).to.equal(422);
      expect((await rule({ name: 'bad', order: 1, action: 'maybe', sources: ['any'], destinations: ['any'] })).status).to.equal(422);
      expect((await rule({ name: 'v', order: 1, action: 'allow', sources: ['any'], destinations: ['any'] }, viewer)).status).to.equal(403);
      expect((await rule({ name: 'v', order: 1, action: 'allow', sources: ['any'], destinations: ['any'] }, null as unknown as string)).status).to.equal(401);
    });

    it('GET /inetacc/firewall-rules lists the tenant\'s rules (422 bad limit, other tenant empty)', async () => {
      const r = await t.request('GET', `${P}/inetacc/firewall-rules`, { token: viewer });
      expect(r.body.rules.map((x: { name: string }) => x.name).sort()).to.deep.equal(['anything', 'branch-web', 'office-web', 'partners']);
      expect((await t.request('GET', `${P}/inetacc/firewall-rules`, { token: other })).body.rules).to.deep.equal([]);
      expect((await t.request('GET', `${P}/inetacc/firewall-rules?limit=0`, { token: viewer })).status).to.equal(422);
      expect((await t.request('GET', `${P}/inetacc/firewall-rules`, { token: null })).status).to.equal(401);
    });

    it('URL rules and DLP policies: create and list (422 bad regex / empty rule)', async () => {
      expect((await t.request('POST', `${P}/inetacc/url-rules`, { token: member, body: { name: 'no-gambling', order: 1, action: 'block', hosts: ['*.casino.example'], categories: ['gambling'] } })).status).to.equal(201);
      expect((await t.request('POST', `${P}/inetacc/url-rules`, { token: member, body: { name: 'empty', order: 2, action: 'block' } })).status).to.equal(422);
      expect((await t.request('GET', `${P}/inetacc/url-rules`, { token: viewer })).body.rules[0]).to.deep.include({ name: 'no-gambling', origin: 'api' });
      expect((await t.request('POST', `${P}/inetacc/dlp-policies`, { token: member, body: { name: 'cards', order: 1, action: 'block', channels: ['upload'], patterns: [{ name: 'pan', regex: '\\b\\d{16}\\b' }] } })).status).to.equal(201);
      expect((await t.request('POST', `${P}/inetacc/dlp-policies`, { token: member, body: { name: 'bad', order: 1, action: 'block', channels: ['upload'], patterns: [{ name: 'x', regex: '(' }] } })).status).to.equal(422);
      expect((await t.request('GET', `${P}/inetacc/dlp-policies`, { token: viewer })).body.policies).to.have.length(1);
      expect((await t.request('GET', `${P}/inetacc/dlp-policies`, { token: other })).body.policies).to.deep.equal([]);
      expect((await t.request('GET', `${P}/inetacc/url-rules`, { token: null })).status).to.equal(401);
    });

    it('application segments and access policies: create and list (422 unknown segment)', async () => {
      const seg = await t.request('POST', `${P}/privacc/application-segments`, { token: member, body: { name: 'hr-app', hosts: ['hr.corp.example', '10.9.0.0/24'], ports: ['443'] } });
      expect(seg.status).to.equal(201);
      ids.segment = seg.body.id;
      const pol = await t.request('POST', `${P}/privacc/access-policies`, { token: member, body: { name: 'hr-staff', order: 1, segment_id: ids.segment, users: ['ann@cs-a.test', 'bob@cs-a.test'] } });
      expect(pol.status).to.equal(201);
      await t.request('POST', `${P}/privacc/access-policies`, { token: member, body: { name: 'hr-audit', order: 2, segment_id: ids.segment, users: ['bob@cs-a.test'] } });
      expect((await t.request('POST', `${P}/privacc/access-policies`, { token: member, body: { name: 'x', order: 3, segment_id: 'nope', users: ['a'] } })).status).to.equal(422);
      expect((await t.request('GET', `${P}/privacc/application-segments`, { token: viewer })).body.segments).to.have.length(1);
      expect((await t.request('GET', `${P}/privacc/access-policies`, { token: viewer })).body.policies).to.have.length(2);
      expect((await t.request('GET', `${P}/privacc/access-policies`, { token: other })).body.policies).to.deep.equal([]);
      expect((await t.request('GET', `${P}/privacc/application-segments`, { token: null })).status).to.equal(401);
    });

    it('POST /access/revoke removes a user from every policy (a policy left empty goes); 404 when nothing grants it', async () => {
      expect((await t.request('POST', `${P}/access/revoke`, { token: member, body: { user: 'bob@cs-a.test' } })).status).to.equal(403);
      const r = await t.request('POST', `${P}/access/revoke`, { token: op, body: { user: 'BOB@cs-a.test', reason: 'left the company' } });
      expect(r.status).to.equal(200);
      expect(r.body.removed_policies).to.have.length(1);
      expect(r.body.updated_policies).to.have.length(1);
      const left = (await t.request('GET', `${P}/privacc/access-policies`, { token: viewer })).body.policies;
      expect(left.map((p: { body: { users: string[] } }) => p.body.users)).to.deep.equal([['ann@cs-a.test']]);
      expect((await t.request('POST', `${P}/access/revoke`, { token: op, body: { user: 'bob@cs-a.test' } })).status).to.equal(404);
      expect((await t.request('POST', `${P}/access/revoke`, { token: other, body: { segment_id: ids.segment } })).status).to.equal(404);
      expect((await t.request('POST', `${P}/access/revoke`, { token: op, body: {} })).status).to.equal(422);
      const a = await t.request('GET', '/security/actions?action=revoke_access', { token: viewer });
      expect(a.body.actions[0]).to.include({ target_type: 'user', target_id: 'bob@cs-a.test' });
    });
  });

  describe('logs and analysis', () => {
    it('POST /logs/ingest attributes each log to its first matching rule (422 bad batch)', async () => {
      const logs = [
        ...['10.0.0.1', '10.0.0.2', '10.0.0.3'].map((ip) => ({ user: 'ann@cs-a.test', source_ip: ip, destination: '93.184.216.34', port: 443 })),
        { source_ip: '172.16.0.1', destination: '93.184.216.34', port: 80, protocol: 'udp' },
        { source_ip: '10.0.0.4', destination: 'example.org', port: 22 },
      ];
      const r = await t.request('POST', `${P}/logs/ingest`, { token: member, body: { logs } });
      expect(r.status).to.equal(201);
      expect(r.body.accepted).to.equal(5);
      const by = Object.fromEntries(r.body.by_rule.map((x: { name: string; hits: number }) => [x.name, x.hits]));
      expect(by).to.deep.equal({ 'office-web': 3, anything: 2 });
      expect((await t.request('POST', `${P}/logs/ingest`, { token: member, body: { logs: [{ source_ip: 'nope', destination: 'x' }] } })).status).to.equal(422);
      expect((await t.request('POST', `${P}/logs/ingest`, { token: member, body: { logs: [] } })).status).to.equal(422);
      expect((await t.request('POST', `${P}/logs/ingest`, { token: viewer, body: { logs } })).status).to.equal(403);
    });

    it('GET /logs filters by user, rule and decision (422, tenant isolation)', async () => {
      const r = await t.request('GET', `${P}/logs?user=ann@cs-a.test&rule_id=${ids.office}`, { token: viewer });
      expect(r.body.logs).to.have.length(3);
      expect(r.body.logs.every((l: { decision: string }) => l.decision === 'allow')).to.equal(true);
      expect((await t.request('GET', `${P}/logs?decision=block`, { token: viewer })).body.logs).to.deep.equal([]);
      expect((await t.request('GET', `${P}/logs`, { token: other })).body.logs).to.deep.equal([]);
      expect((await t.request('GET', `${P}/logs?decision=maybe`, { token: viewer })).status).to.equal(422);
      expect((await t.request('GET', `${P}/logs`, { token: null })).status).to.equal(401);
    });

    it('GET /detect/permissive-rules lists any-any, open sources, wide ports and shadowed rules', async () => {
      const r = await t.request('GET', `${P}/detect/permissive-rules`, { token: viewer });
      expect(r.body.checked).to.equal(4);
      const kinds = Object.fromEntries(r.body.rules.map((x: { name: string; issues: Array<{ kind: string }> }) => [x.name, x.issues.map((i) => i.kind)]));
      expect(kinds).to.deep.equal({ partners: ['open_source', 'wide_ports'], 'branch-web': ['shadowed'], anything: ['any_any', 'wide_ports'] });
      expect((await t.request('GET', `${P}/detect/permissive-rules`, { token: other })).body.checked).to.equal(0);
      expect((await t.request('GET', `${P}/detect/permissive-rules`, { token: null })).status).to.equal(401);
    });

    it('GET /optimize/zero-trust: remove never-hit rules, narrow broad ones to the sources seen', async () => {
      const r = await t.request('GET', `${P}/optimize/zero-trust`, { token: viewer });
      const rec = Object.fromEntries(r.body.recommendations.map((x: { name: string }) => [x.name, x]));
      expect(rec['office-web']).to.include({ recommendation: 'narrow', hits: 3 });
      expect(rec['office-web'].proposed_sources).to.deep.equal(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
      expect(rec['branch-web']).to.include({ recommendation: 'remove', hits: 0 });
      expect(rec.anything).to.include({ recommendation: 'narrow', hits: 2 });
      expect(r.body.logs_considered).to.equal(5);
      expect((await t.request('GET', `${P}/optimize/zero-trust?window_days=0`, { token: viewer })).status).to.equal(422);
      expect((await t.request('GET', `${P}/optimize/zero-trust`, { token: null })).status).to.equal(401);
    });

    it('POST /sync/zone-policy translates netsec zones and the applied set, with a diff (409 before any apply)', async () => {
      expect((await t.request('POST', `${P}/sync/zone-policy`, { token: op, body: {} })).status).to.equal(409);
      const ns = '/secsuite/netsec';
      const web = (await t.request('POST', `${ns}/zones`, { token: member, body: { name: 'web', members: ['10.20.1.0/24'] } })).body.id;
      const db = (await t.request('POST', `${ns}/zones`, { token: member, body: { name: 'db', members: ['10.20.2.0/24'] } })).body.id;
      await t.request('POST', `${ns}/zones`, { token: member, body: { name: 'empty' } });
      await t.request('POST', `${ns}/policies`, { token: member, body: { name: 'sql', source_zone: web, destination_zone: db, ports: ['5432'], action: 'allow', priority: 10 } });
      await t.request('POST', `${ns}/policies/apply`, { token: op, body: {} });
      const dry = await t.request('POST', `${P}/sync/zone-policy`, { token: op, body: { dry_run: true } });
      expect(dry.status).to.equal(200);
      expect(dry.body.added).to.deep.equal([{ name: 'netsec:sql', order: 11, action: 'allow', sources: ['10.20.1.0/24'], destinations: ['10.20.2.0/24'], ports: ['5432'], protocol: 'tcp', enabled: true }]);
      expect((await t.request('GET', `${P}/inetacc/firewall-rules`, { token: viewer })).body.rules).to.have.length(4);
      const real = await t.request('POST', `${P}/sync/zone-policy`, { token: op, body: {} });
      expect(real.body.added).to.have.length(1);
      const again = await t.request('POST', `${P}/sync/zone-policy`, { token: op, body: {} });
      expect(again.body).to.include({ unchanged: 1 });
      expect(again.body.added).to.deep.equal([]);
      await t.request('POST', `${ns}/isolate`, { token: op, body: { address: '10.20.9.9' } }); // not a member: 404, nothing changes
      await t.request('POST', `${ns}/zones/${web}/members`, { token: member, body: { members: ['10.20.3.3'] } });
      await t.request('POST', `${ns}/isolate`, { token: op, body: { address: '10.20.3.3' } });
      const q = await t.request('POST', `${P}/sync/zone-policy`, { token: op, body: {} });
      expect(q.body.added.map((r: { name: string }) => r.name)).to.deep.equal(['netsec:quarantine-out', 'netsec:quarantine-in']);
      expect(q.body.unchanged).to.equal(1);
      expect((await t.request('POST', `${P}/sync/zone-policy`, { token: member, body: {} })).status).to.equal(403);
      expect((await t.request('POST', `${P}/sync/zone-policy`, { token: op, body: { dry_run: 'yes' } })).status).to.equal(422);
      expect((await t.request('POST', `${P}/sync/zone-policy`, { token: other, body: {} })).status).to.equal(409);
    });

    it('GET /health shows the local engine, object counts, log intake and the last sync', async () => {
      const r = await t.request('GET', `${P}/health`, { token: viewer });
      expect(r.body.adapter.kind).to.equal('local');
      expect(r.body.objects).to.include({ firewall: 7, url: 1, dlp: 1, segment: 1, access: 1 });
      expect(r.body.logs).to.include({ total: 5, last_24h: 5 });
      expect(r.body.last_sync_at).to.be.a('string');
      expect((await t.request('GET', `${P}/health`, { token: other })).body.logs.total).to.equal(0);
      expect((await t.request('GET', `${P}/health`, { token: null })).status).to.equal(401);
    });
  });
});
