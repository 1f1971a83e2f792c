import { z } from 'zod';
import { isNet } from '../cidr';
import { portRange } from './policy';

export const netText = z.string().min(2).max(64).refine((v) => isNet(v) && v.trim().toLowerCase() !== 'any', 'an IP address or a CIDR network');
const ip = z.string().min(2).max(64).refine((v) => isNet(v) && !v.includes('/') && v !== 'any', 'an IP address');
const name = z.string().min(1).max(128).regex(/^[A-Za-z0-9 ._-]+$/, 'letters, digits, space and . _ - only');
const kind = z.enum(['standard', 'quarantine', 'carrier']);

export const member = z.object({ value: z.string(), added_at: z.string() });
export const zone = z.object({ id: z.string(), tenant_id: z.string(), name: z.string(), description: z.string(), kind, members: z.array(member), created_at: z.string(), updated_at: z.string() });
export const zoneBody = z.object({ name, description: z.string().max(1000).default(''), kind: kind.default('standard'), members: z.array(netText).max(1000).default([]) });
export const zonePatch = z.object({ name: name.optional(), description: z.string().max(1000).optional(), kind: kind.optional() }).refine((v) => Object.keys(v).length > 0, 'give at least one field');
export const membersBody = z.object({ members: z.array(netText).min(1).max(1000) });
export const zoneParams = z.object({ zone_id: z.string().min(1).max(64) });
export const memberParams = z.object({ zone_id: z.string().min(1).max(64), member: z.string().min(1).max(64) });

const portSpec = z.string().refine((v) => portRange(v) !== null, 'a port, a range lo-hi (0-65535) or any');
export const policyBody = z.object({
  name,
  source_zone: z.string().min(1).max(64),
  destination_zone: z.string().min(1).max(64),
  ports: z.array(portSpec).min(1).max(100).default(['any']),
  protocol: z.enum(['tcp', 'udp', 'icmp', 'any']).default('tcp'),
  action: z.enum(['allow', 'deny']),
  priority: z.number().int().min(0).max(100_000),
});
export const policy = z.object({
  id: z.string(), name: z.string(), source_zone: z.string(), destination_zone: z.string(), ports: z.array(z.string()),
  protocol: z.enum(['tcp', 'udp', 'icmp', 'any']), action: z.enum(['allow', 'deny']), priority: z.number().int(), created_at: z.string(), updated_at: z.string(),
});
export const policiesResponse = z.object({
  policies: z.array(policy),
  active: z.object({ version: z.number().int(), applied_at: z.string(), policies: z.number().int() }).nullable(),
  pending_changes: z.boolean(),
});

export const flow = z.object({ src_ip: ip, dst_ip: ip, dst_port: z.number().int().min(0).max(65535).optional(), protocol: z.enum(['tcp', 'udp', 'icmp']) });
export const simulateBody = z.object({ flows: z.array(flow).min(1).max(1000), version: z.number().int().min(1).optional() });
const step = z.object({ policy_id: z.string().nullable(), name: z.string(), priority: z.number().int().nullable(), matched: z.boolean(), reason: z.string() });
export const simulateResponse = z.object({
  version: z.number().int(),
  results: z.array(z.object({ flow, action: z.enum(['allow', 'deny']), matched_policy: z.object({ id: z.string(), name: z.string(), priority: z.number().int() }).nullable(), source_zones: z.array(z.string()), destination_zones: z.array(z.string()), path: z.array(step) })),
  method: z.string(),
});

const bare = policy.omit({ created_at: true, updated_at: true });
export const applyBody = z.object({ rollback_to: z.number().int().min(1).max(2_147_483_647).optional() });
export const applyResponse = z.object({
  version: z.number().int(),
  previous_version: z.number().int().nullable(),
  policies: z.array(bare),
  diff: z.object({ added: z.array(bare), removed: z.array(bare), changed: z.array(z.object({ id: z.string(), before: bare, after: bare })), unchanged: z.number().int() }),
  action_id: z.string(),
});

export const isolateBody = z.object({ address: ip, reason: z.string().max(500).optional() });
export const isolateResponse = z.object({ address: z.string(), from_zones: z.array(z.string()), quarantine_zone: z.string(), action_id: z.string() });

export const providerBody = z
  .object({ name, adapter: z.enum(['local', 'http']), url: z.string().url().max(2048).optional(), addresses: z.array(netText).max(1000).default([]), carrier: z.boolean().default(false) })
  .refine((v) => v.adapter !== 'http' || !!v.url, { message: 'an http provider needs its url', path: ['url'] });
export const provider = z.object({
  id: z.string(), name: z.string(), adapter: z.enum(['local', 'http']), url: z.string().nullable(), addresses: z.array(z.string()), carrier: z.boolean(), created_at: z.string(),
  health: z.object({ status: z.enum(['healthy', 'unreachable', 'unknown']), latency_ms: z.number().nullable(), detail: z.string() }),
});

export const threat = z.object({
  id: z.string(), kind: z.enum(['finding', 'event']), category: z.string(), severity: z.string(), subject: z.string().nullable(), address: z.string().nullable(),
  zones: z.array(z.string()), isolated: z.boolean(), created_at: z.string(),
});

export const pageQuery = z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100), cursor: z.string().max(500).optional() });
