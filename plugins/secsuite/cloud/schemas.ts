import { z } from 'zod';
import { isNet } from '../cidr';
import { portRange } from '../net/policy';

const name = z.string().min(1).max(200);
const net = z.string().min(1).max(64).refine(isNet, 'an IP address, a CIDR network or any');
const port = z.string().refine((v) => portRange(v) !== null, 'a port, a range lo-hi (0-65535) or any');
const order = z.number().int().min(0).max(100_000);
const hostPattern = z.string().min(1).max(253).regex(/^(\*\.)?[A-Za-z0-9.-]+$/, 'a host name, optionally starting with *.');

/** Each kind of stored cloudsec object: its body schema and the key its list answers under. */
export const KINDS = {
  firewall: {
    key: 'rules', path: '/inetacc/firewall-rules', what: 'Internet-access firewall rules',
    body: z.object({ name, order, action: z.enum(['allow', 'block']), sources: z.array(net).min(1).max(500), destinations: z.array(net).min(1).max(500), ports: z.array(port).min(1).max(100).default(['any']), protocol: z.enum(['tcp', 'udp', 'icmp', 'any']).default('tcp'), enabled: z.boolean().default(true) }),
  },
  url: {
    key: 'rules', path: '/inetacc/url-rules', what: 'URL filtering rules',
    body: z.object({ name, order, action: z.enum(['allow', 'block', 'caution']), hosts: z.array(hostPattern).max(1000).default([]), categories: z.array(z.string().min(1).max(64)).max(100).default([]) }).refine((v) => v.hosts.length + v.categories.length > 0, 'give hosts or categories'),
  },
  dlp: {
    key: 'policies', path: '/inetacc/dlp-policies', what: 'Data-loss-prevention policies',
    body: z.object({
      name, order, action: z.enum(['block', 'alert']), channels: z.array(z.enum(['upload', 'email', 'chat', 'paste'])).min(1).max(4),
      patterns: z.array(z.object({ name: z.string().min(1).max(64), regex: z.string().min(1).max(500).refine((r) => { try { new RegExp(r); return true; } catch { return false; } }, 'a valid regular expression') })).min(1).max(50),
    }),
  },
  segment: {
    key: 'segments', path: '/privacc/application-segments', what: 'Private-access application segments',
    body: z.object({ name, order: order.default(0), hosts: z.array(z.union([hostPattern, net])).min(1).max(500), ports: z.array(port).min(1).max(100) }),
  },
  access: {
    key: 'policies', path: '/privacc/access-policies', what: 'Private-access policies (who reaches which segment)',
    body: z.object({ name, order, segment_id: z.string().min(1).max(64), users: z.array(z.string().min(1).max(320)).min(1).max(1000), action: z.enum(['allow', 'deny']).default('allow') }),
  },
} as const;
export type Kind = keyof typeof KINDS;

export const object = z.object({ id: z.string(), kind: z.string(), name: z.string(), order: z.number().int(), origin: z.enum(['api', 'sync']), body: z.record(z.string(), z.unknown()), created_at: z.string(), updated_at: z.string() });
export const pageQuery = z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100), cursor: z.string().max(500).optional() });

const ip = z.string().min(2).max(64).refine((v) => isNet(v) && !v.includes('/') && v !== 'any', 'an IP address');
export const logIn = z.object({
  timestamp: z.iso.datetime({ offset: true }).optional(),
  user: z.string().min(1).max(320).optional(),
  app: z.string().min(1).max(200).optional(),
  source_ip: ip,
  destination: z.string().min(1).max(512),
  port: z.number().int().min(0).max(65535).optional(),
  protocol: z.enum(['tcp', 'udp', 'icmp']).default('tcp'),
  bytes: z.number().int().min(0).default(0),
});
export const ingestBody = z.object({ logs: z.array(logIn).min(1).max(5000) });
export const logOut = z.object({ id: z.string(), at: z.string(), user: z.string().nullable(), app: z.string().nullable(), source_ip: z.string(), destination: z.string().nullable(), port: z.number().int().nullable(), protocol: z.string(), rule_id: z.string().nullable(), decision: z.enum(['allow', 'block']), bytes: z.number().int(), created_at: z.string() });
export const logsQuery = pageQuery.extend({
  user: z.string().max(320).optional(),
  rule_id: z.string().max(64).optional(),
  decision: z.enum(['allow', 'block']).optional(),
  source_ip: z.string().max(64).optional(),
});
export const revokeBody = z.object({ user: z.string().min(1).max(320).optional(), segment_id: z.string().min(1).max(64).optional(), reason: z.string().max(500).optional() }).refine((v) => v.user || v.segment_id, 'give a user, an application segment (segment_id), or both');
