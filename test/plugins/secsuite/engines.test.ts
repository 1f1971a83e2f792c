import { expect } from 'chai';
import { coversText, isEverything, smallestCover } from '../../../plugins/secsuite/cidr';
import { permissiveIssues, firstMatch, type FirewallRule } from '../../../plugins/secsuite/cloud/engine';
import { parseBundle } from '../../../plugins/secsuite/endpoint/stix';
import { diffPolicies, evaluate, type Policy, type Zone } from '../../../plugins/secsuite/net/policy';
import { internationalNumber, parseSip } from '../../../plugins/secsuite/net/sip';

describe('secsuite engines (pure)', () => {
  it('CIDR containment across families, IPv4-mapped addresses, and the smallest cover', () => {
    expect(coversText('10.0.0.0/8', '10.1.2.0/24')).to.equal(true);
    expect(coversText('10.1.2.0/24', '10.0.0.0/8')).to.equal(false);
    expect(coversText('10.0.0.0/8', '::ffff:10.2.3.4')).to.equal(true);
    expect(coversText('2001:db8::/32', '2001:db8:1::1')).to.equal(true);
    expect(coversText('0.0.0.0/0', '2001:db8::1')).to.equal(false);
    expect(isEverything('::/0')).to.equal(true);
    expect(isEverything('any')).to.equal(true);
    expect(isEverything('0.0.0.0/1')).to.equal(false);
    expect(smallestCover(['10.0.0.1', '10.0.0.6'])).to.equal('10.0.0.0/29');
    expect(smallestCover(['10.0.0.1'])).to.equal('10.0.0.1');
    expect(smallestCover(['10.0.0.1', '2001:db8::1'])).to.equal(null);
  });

  it('first-match policy evaluation with quarantine first and an implicit deny', () => {
    const zones: Zone[] = [
      { id: 'a', name: 'a', kind: 'standard', members: [{ value: '10.0.0.0/24', added_at: '' }] },
      { id: 'b', name: 'b', kind: 'standard', members: [{ value: '10.0.1.0/24', added_at: '' }] },
      { id: 'q', name: 'q', kind: 'quarantine', members: [{ value: '10.0.1.9', added_at: '' }] },
    ];
    const policies: Policy[] = [
      { id: '2', name: 'deny-all', source_zone: 'any', destination_zone: 'any', ports: ['any'], protocol: 'any', action: 'deny', priority: 100 },
      { id: '1', name: 'a-b-https', source_zone: 'a', destination_zone: 'b', ports: ['443', '8000-8010'], protocol: 'tcp', action: 'allow', priority: 10 },
    ];
    expect(evaluate(zones, policies, { src_ip: '10.0.0.5', dst_ip: '10.0.1.5', dst_port: 8005, protocol: 'tcp' }).action).to.equal('allow');
    const d = evaluate(zones, policies, { src_ip: '10.0.0.5', dst_ip: '10.0.1.5', dst_port: 22, protocol: 'tcp' });
    expect(d.action).to.equal('deny');
    expect(d.path.map((s) => s.reason)).to.deep.equal(['port not in the policy ports', 'matched']);
    const q = evaluate(zones, policies, { src_ip: '10.0.0.5', dst_ip: '10.0.1.9', dst_port: 443, protocol: 'tcp' });
    expect(q.path[0].name).to.equal('quarantine');
    const none = evaluate(zones, policies.slice(1), { src_ip: '192.0.2.1', dst_ip: '10.0.1.5', dst_port: 443, protocol: 'tcp' });
    expect(none.path.at(-1)!.name).to.equal('implicit deny');
    const diff = diffPolicies(policies, [{ ...policies[1], priority: 5 }]);
    expect(diff.removed.map((p) => p.id)).to.deep.equal(['2']);
    expect(diff.changed.map((c) => c.id)).to.deep.equal(['1']);
  });

  it('parses RFC 3261 requests and responses, compact headers and folding', () => {
    const m = parseSip('INVITE sip:+441234567890@x SIP/2.0\r\nv: SIP/2.0/UDP h\r\ni: abc@h\r\nCSeq: 7 INVITE\r\nf: <sip:a@h>;tag=1\r\nt: Bob\r\n <sip:b@h>\r\nUser-Agent: friendly-scanner\r\n\r\nbody');
    expect(m).to.include({ method: 'INVITE', call_id: 'abc@h', cseq_method: 'INVITE', from_uri: 'sip:a@h', to_uri: 'sip:b@h', user_agent: 'friendly-scanner' });
    expect(parseSip('SIP/2.0 486 Busy Here\nCall-ID: x\nCSeq: 1 INVITE\n\n')).to.include({ status: 486, method: null });
    expect(() => parseSip('HTTP/1.1 200 OK\r\n\r\n')).to.throw(/start line/);
    expect(() => parseSip('OPTIONS sip:a@b SIP/2.0\r\nCall-ID: x\r\n\r\n')).to.throw(/CSeq/);
    expect(internationalNumber('sip:+441234567890@x')).to.equal('441234567890');
    expect(internationalNumber('sip:00441234567890@x')).to.equal('441234567890');
    expect(internationalNumber('sip:200@x')).to.equal(null);
  });

  it('reads STIX 2.1 indicator patterns (hashes, addresses, domains, URLs) and skips the rest', () => {
    const { indicators, skipped } = parseBundle({
      type: 'bundle',
      id: 'bundle--1',
      objects: [
        { type: 'indicator', id: 'indicator--1', pattern_type: 'stix', pattern: "[file:hashes.MD5 = 'ABCDEF0123456789ABCDEF0123456789'] OR [url:value = 'http://x.example/a?b=\\'c\\'']" },
        { type: 'indicator', id: 'indicator--2', pattern_type: 'stix', pattern: "[process:name = 'evil.exe']" },
        { type: 'indicator', id: 'indicator--3', pattern_type: 'stix', revoked: true, pattern: "[domain-name:value = 'x.example']" },
      ],
    });
    expect(indicators.map((i) => `${i.type}:${i.value}`)).to.deep.equal(['hash:abcdef0123456789abcdef0123456789', "url:http://x.example/a?b='c'"]);
    expect(skipped.map((s) => s.id)).to.deep.equal(['indicator--2', 'indicator--3']);
    expect(() => parseBundle({ type: 'indicator' })).to.throw(/bundle/);
  });

  it('permissive firewall rules and first-match log attribution', () => {
    const r = (o: Partial<FirewallRule>): FirewallRule => ({ id: o.name!, name: '', order: 0, action: 'allow', sources: ['10.0.0.0/8'], destinations: ['0.0.0.0/0'], ports: ['443'], protocol: 'tcp', enabled: true, ...o });
    const a = r({ name: 'a', order: 1 });
    const b = r({ name: 'b', order: 2, sources: ['10.1.0.0/16'], ports: ['443'] });
    expect(permissiveIssues(b, [a]).map((i) => i.kind)).to.deep.equal(['shadowed']);
    expect(permissiveIssues(r({ name: 'c', sources: ['0.0.0.0/0'], ports: ['1-2000'] }), []).map((i) => i.kind)).to.deep.equal(['any_any', 'wide_ports']);
    expect(permissiveIssues(r({ name: 'd', sources: ['0.0.0.0/0'], destinations: ['192.0.2.0/24'], action: 'block', ports: ['any'] }), [])).to.deep.equal([]);
    expect(firstMatch([a, b], { source_ip: '10.1.2.3', destination: '198.51.100.1', port: 443, protocol: 'tcp' })!.name).to.equal('a');
    expect(firstMatch([a, b], { source_ip: '10.1.2.3', destination: 'example.org', port: 443, protocol: 'tcp' })!.name).to.equal('a');
    expect(firstMatch([a, b], { source_ip: '10.1.2.3', destination: '198.51.100.1', port: 80, protocol: 'tcp' })).to.equal(null);
  });
});
