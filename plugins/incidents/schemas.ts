import { z } from 'zod';
import { MITIGATION_NAMES } from './mitigations';
import { SEVERITIES, STATES } from './store';

export const name = z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, 'lowercase letters, digits, - and _, starting with a letter');
const nodeName = z.string().regex(/^[a-z][a-z0-9_-]{0,127}$/, 'a node id such as trading-1');

export const entry = z.object({
  at: z.string(),
  kind: z.string(),
  from_state: z.enum(STATES).nullable(),
  to_state: z.enum(STATES).nullable(),
  source: z.enum(['manual', 'automated']),
  actor: z.string(),
  detail: z.record(z.string(), z.unknown()),
});

export const incident = z.object({
  id: z.string(),
  tenant_id: z.string().nullable(),
  title: z.string(),
  description: z.string().nullable(),
  severity: z.enum(SEVERITIES),
  state: z.enum(STATES),
  domain: z.string().nullable(),
  kernel_id: z.string().nullable(),
  node_id: z.string().nullable(),
  source: z.enum(['manual', 'automated']),
  cause: z.string().nullable(),
  created_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const withTimeline = incident.extend({ timeline: z.array(entry) });
export const idParams = z.object({ incident_id: z.uuid() });

export const detectBody = z.object({
  title: z.string().trim().min(1).max(200),
  severity: z.enum(SEVERITIES),
  domain: name.optional(),
  kernel_id: name.optional(),
  node_id: nodeName.optional(),
  description: z.string().max(4000).optional(),
});

export const noteBody = z.object({ note: z.string().max(2000).optional() });

export const mitigateBody = z.object({
  action: z.enum(MITIGATION_NAMES),
  target: z.string().min(1).max(128),
  note: z.string().max(2000).optional(),
});

export const listQuery = z.object({
  severity: z.enum(SEVERITIES).optional(),
  domain: name.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().min(1).max(512).optional(),
});

export const analyticsQuery = z.object({
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  bucket: z.enum(['hour', 'day']).default('day'),
});
